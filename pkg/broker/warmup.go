package broker

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/batkube/batkube/pkg/apiserver"
)

// Before the first step, the broker makes sure the controllers run: a
// controller manager that is still starting (its informers syncing, its
// workers not yet started) sleeps on timers, and a barrier on its process
// would take it for idle. Probes that create no pod are created in
// probeNamespace and the broker waits until each has had its controller's
// answer: a suspended Job marked Suspended (the Job controller), a
// ReplicaSet of no replicas whose status has caught up (the ReplicaSet
// controller), a Deployment of no replicas likewise (the Deployment
// controller), a ConfigMap owned by an object that does not exist deleted
// (the garbage collector). The probes are then deleted.

// probeNamespace holds the probes.
const probeNamespace = "batkube-system"

// ControllersReadyTimeout bounds the wait for the controllers' answers.
const ControllersReadyTimeout = 2 * time.Minute

const probeManifests = `
apiVersion: v1
kind: Namespace
metadata: {name: batkube-system}
---
apiVersion: batch/v1
kind: Job
metadata: {name: batkube-probe, namespace: batkube-system}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: probe, image: probe}]
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: batkube-probe, namespace: batkube-system}
spec:
  replicas: 0
  selector: {matchLabels: {batkube.io/probe: replicaset}}
  template:
    metadata: {labels: {batkube.io/probe: replicaset}}
    spec: {containers: [{name: probe, image: probe}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: batkube-probe, namespace: batkube-system}
spec:
  replicas: 0
  selector: {matchLabels: {batkube.io/probe: deployment}}
  template:
    metadata: {labels: {batkube.io/probe: deployment}}
    spec: {containers: [{name: probe, image: probe}]}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: batkube-probe
  namespace: batkube-system
  ownerReferences:
  - {apiVersion: v1, kind: ConfigMap, name: batkube-probe-owner, uid: 00000000-0000-0000-0000-00000000b47c}
`

var (
	jobsResource        = schema.GroupResource{Group: "batch", Resource: "jobs"}
	replicaSetsResource = schema.GroupResource{Group: "apps", Resource: "replicasets"}
	deploymentsResource = schema.GroupResource{Group: "apps", Resource: "deployments"}
	configMapsResource  = schema.GroupResource{Resource: "configmaps"}
)

// awaitControllers creates the probes and waits for the controllers'
// answers, then deletes the probes.
func (r *run) awaitControllers(ctx context.Context) error {
	docs, err := apiserver.ManifestDocuments([]byte(probeManifests))
	if err != nil {
		return fmt.Errorf("controllers' probes: %w", err)
	}
	for _, doc := range docs {
		if _, err := r.api.CreateDocument(ctx, doc); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("controllers' probes: %w", err)
		}
	}
	start := time.Now()
	deadline := time.NewTimer(ControllersReadyTimeout)
	defer deadline.Stop()
	backoff := time.Millisecond
	for {
		waiting := r.unansweredProbes()
		if len(waiting) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("the controllers did not answer within %s (is kube-controller-manager running, with these controllers?): %s",
				ControllersReadyTimeout, strings.Join(waiting, "; "))
		case <-time.After(backoff):
			backoff = min(2*backoff, 50*time.Millisecond)
		}
	}
	r.log.Info("the controllers run", "after", time.Since(start))
	for _, doc := range docs[1:4] { // the Job, the ReplicaSet, the Deployment
		if _, err := r.api.DeleteDocument(ctx, doc); err != nil {
			return fmt.Errorf("controllers' probes: %w", err)
		}
	}
	return nil
}

// unansweredProbes says which probes have not had their answer yet.
func (r *run) unansweredProbes() []string {
	var waiting []string
	if st, err := r.store.Get(jobsResource, probeNamespace, "batkube-probe"); err == nil {
		suspended := false
		if job, ok := st.Object().(*batchv1.Job); ok {
			for _, c := range job.Status.Conditions {
				suspended = suspended || c.Type == batchv1.JobSuspended && c.Status == corev1.ConditionTrue
			}
		}
		if !suspended {
			waiting = append(waiting, "the Job controller has not marked a suspended Job Suspended")
		}
	}
	if st, err := r.store.Get(replicaSetsResource, probeNamespace, "batkube-probe"); err == nil {
		if rs, ok := st.Object().(*appsv1.ReplicaSet); ok && rs.Status.ObservedGeneration < rs.Generation {
			waiting = append(waiting, "the ReplicaSet controller has not observed a ReplicaSet")
		}
	}
	if st, err := r.store.Get(deploymentsResource, probeNamespace, "batkube-probe"); err == nil {
		if d, ok := st.Object().(*appsv1.Deployment); ok && d.Status.ObservedGeneration < d.Generation {
			waiting = append(waiting, "the Deployment controller has not observed a Deployment")
		}
	}
	if _, err := r.store.Get(configMapsResource, probeNamespace, "batkube-probe"); err == nil {
		waiting = append(waiting, "the garbage collector has not deleted an object whose owner does not exist")
	}
	return waiting
}
