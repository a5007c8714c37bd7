package broker

import (
	"cmp"
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

// RepeatAnnotation, on a timed object, makes it stand for that many
// copies, named NAME-0, NAME-1..., the i-th created (and deleted)
// i × RepeatEveryAnnotation seconds after the instants its annotations
// give: an arrival process in one document (a Job every 100 ms, 350
// times).
const (
	RepeatAnnotation      = "batkube.io/repeat"
	RepeatEveryAnnotation = "batkube.io/repeat-every"
)

// maxRepeat bounds RepeatAnnotation (each copy is held until created).
const maxRepeat = 10_000_000

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
		end := -1.0
		if v, ok := head.Metadata.Annotations[DeleteAtAnnotation]; ok {
			if end, err = parseInstant(v); err != nil || end < at {
				return nil, nil, fmt.Errorf("%s: annotation %s=%q: want a number of seconds >= its creation, %g", name, DeleteAtAnnotation, v, at)
			}
		}
		copies, every, err := repetition(head.Metadata.Annotations)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		if copies == 0 {
			timed = appendTimed(timed, doc, name, at, end)
			continue
		}
		for i := range copies {
			copyName := head.Metadata.Name + "-" + strconv.Itoa(i)
			manifest, err := renamed(doc, copyName)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", name, err)
			}
			shift := float64(i) * every
			copyEnd := end
			if end >= 0 {
				copyEnd = end + shift
			}
			timed = appendTimed(timed, manifest, head.Kind+"/"+head.Metadata.Namespace+"/"+copyName, at+shift, copyEnd)
		}
	}
	slices.SortStableFunc(timed, func(a, b TimedObject) int { return cmp.Compare(a.At, b.At) })
	return timed, rest, nil
}

// appendTimed appends the creation of an object at at and, if end >= 0,
// its deletion at end.
func appendTimed(timed []TimedObject, doc json.RawMessage, name string, at, end float64) []TimedObject {
	timed = append(timed, TimedObject{At: at, Manifest: doc, Name: name})
	if end >= 0 {
		timed = append(timed, TimedObject{At: end, Manifest: doc, Name: name, Delete: true})
	}
	return timed
}

// repetition reads RepeatAnnotation and RepeatEveryAnnotation (copies 0:
// not repeated).
func repetition(annotations map[string]string) (copies int, every float64, err error) {
	n, repeated := annotations[RepeatAnnotation]
	e, spaced := annotations[RepeatEveryAnnotation]
	if !repeated {
		if spaced {
			return 0, 0, fmt.Errorf("annotation %s without %s", RepeatEveryAnnotation, RepeatAnnotation)
		}
		return 0, 0, nil
	}
	if copies, err = strconv.Atoi(n); err != nil || copies < 1 || copies > maxRepeat {
		return 0, 0, fmt.Errorf("annotation %s=%q: want a count from 1 to %d", RepeatAnnotation, n, maxRepeat)
	}
	if spaced {
		if every, err = parseInstant(e); err != nil {
			return 0, 0, fmt.Errorf("annotation %s: %w", RepeatEveryAnnotation, err)
		}
	}
	return copies, every, nil
}

// renamed is the manifest doc with metadata.name set to name and the
// repetition's annotations removed.
func renamed(doc json.RawMessage, name string) (json.RawMessage, error) {
	var obj map[string]any
	if err := json.Unmarshal(doc, &obj); err != nil {
		return nil, err
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		return nil, fmt.Errorf("no metadata")
	}
	meta["name"] = name
	if annotations, ok := meta["annotations"].(map[string]any); ok {
		delete(annotations, RepeatAnnotation)
		delete(annotations, RepeatEveryAnnotation)
	}
	return json.Marshal(obj)
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
