package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/batkube/batkube/pkg/translate"
)

// CreateAtAnnotation, on an object of a run's manifests (kubernetes-server
// --objects), is the simulated instant (seconds) at which the broker
// creates it: a Job submitted at 120 s. DeleteAtAnnotation is the instant
// at which it deletes it: a Deployment that serves for an hour.
const (
	CreateAtAnnotation = translate.CreateAtAnnotation
	DeleteAtAnnotation = translate.DeleteAtAnnotation
)

// TimedObject is an object of a manifest that the broker creates at a
// simulated instant, once the simulation has begun.
type TimedObject struct {
	At       float64
	Manifest json.RawMessage // one object, JSON
	Name     string          // kind/namespace/name, for messages
	// Delete: the object is deleted at At (DeleteAtAnnotation).
	Delete bool
}

// podCreatingKinds are the kinds whose controllers create pods: without
// an instant of their own, they are created at the simulation's start
// (pods created before it would not be Batsim jobs).
var podCreatingKinds = map[string]bool{"Job": true, "CronJob": true, "Deployment": true, "ReplicaSet": true,
	"StatefulSet": true, "DaemonSet": true, "ReplicationController": true}

// SplitTimedObjects sorts the objects of a manifest into those created
// before the simulation (the rest) and those the broker creates at an
// instant: the ones annotated CreateAtAnnotation, and the pod-creating
// kinds (at 0 unless annotated). The timed ones are sorted by instant,
// in manifest order within one.
func SplitTimedObjects(docs []json.RawMessage) (timed []TimedObject, rest []json.RawMessage, err error) {
	for i, doc := range docs {
		var head struct {
			metav1.TypeMeta `json:",inline"`
			Metadata        metav1.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(doc, &head); err != nil {
			return nil, nil, fmt.Errorf("object %d: %w", i+1, err)
		}
		name := head.Kind + "/" + head.Metadata.Namespace + "/" + head.Metadata.Name
		v, annotated := head.Metadata.Annotations[CreateAtAnnotation]
		if !annotated && !podCreatingKinds[head.Kind] {
			rest = append(rest, doc)
			continue
		}
		at := 0.0
		if annotated {
			if at, err = parseInstant(v); err != nil {
				return nil, nil, fmt.Errorf("%s: annotation %s: %w", name, CreateAtAnnotation, err)
			}
		}
		timed = append(timed, TimedObject{At: at, Manifest: doc, Name: name})
		if v, ok := head.Metadata.Annotations[DeleteAtAnnotation]; ok {
			end, err := parseInstant(v)
			if err != nil || end < at {
				return nil, nil, fmt.Errorf("%s: annotation %s=%q: want a number of seconds >= its creation, %g", name, DeleteAtAnnotation, v, at)
			}
			timed = append(timed, TimedObject{At: end, Manifest: doc, Name: name, Delete: true})
		}
	}
	slices.SortStableFunc(timed, func(a, b TimedObject) int {
		switch {
		case a.At < b.At:
			return -1
		case a.At > b.At:
			return 1
		}
		return 0
	})
	return timed, rest, nil
}

// parseInstant parses an instant of an annotation.
func parseInstant(v string) (float64, error) {
	at, err := strconv.ParseFloat(v, 64)
	if err != nil || at < 0 || math.IsInf(at, 0) || math.IsNaN(at) {
		return 0, fmt.Errorf("%q: want a number of seconds >= 0", v)
	}
	return at, nil
}

// createDueObjects creates (or deletes) the timed objects due at now.
func (r *run) createDueObjects(ctx context.Context, now float64) error {
	n := 0
	for n < len(r.objects) && r.objects[n].At-now < callNoise {
		o := r.objects[n]
		n++
		if o.Delete {
			if _, err := r.api.DeleteDocument(ctx, o.Manifest); err != nil {
				return fmt.Errorf("deleting %s at t=%g: %w", o.Name, now, err)
			}
			r.log.Info("deleted a timed object", "object", o.Name, "simulatedTime", now)
			continue
		}
		if _, err := r.api.CreateDocument(ctx, o.Manifest); err != nil {
			return fmt.Errorf("creating %s at t=%g: %w", o.Name, now, err)
		}
		r.log.Info("created a timed object", "object", o.Name, "simulatedTime", now)
	}
	r.objects = r.objects[n:]
	return nil
}

// objectWakeUp asks for a call at the next timed object's instant.
func (r *run) objectWakeUp(replyNow float64) {
	if len(r.objects) > 0 && r.objects[0].At > replyNow {
		r.callAt(r.objects[0].At)
	}
}
