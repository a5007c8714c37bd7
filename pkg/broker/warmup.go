package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/batkube/batkube/pkg/apiserver"
	"github.com/batkube/batkube/pkg/store"
)

// Before the first step, the broker makes sure the controllers run. A
// controller that is still starting (its informers syncing, its workers not
// yet started) sleeps on timers — client-go polls a cache's sync every
// 100 ms of wall time — and a barrier on its process would take it for
// idle: the Jobs of the first instants would wait, unseen, for a later
// step. So simulated time starts only once each controller has answered a
// probe of its own: objects in probeNamespace that create no pod, each of
// which its controller changes in a way the broker can see, deleted again
// before time 0.
//
// kube-controller-manager (every run with controllers): a suspended Job
// marked Suspended (the Job controller), a ReplicaSet of no replicas whose
// status has caught up (the ReplicaSet controller), a Deployment of no
// replicas likewise (the Deployment controller), a ConfigMap owned by an
// object that does not exist deleted (the garbage collector).
//
// Kueue (Options.AwaitKueue): a ClusterQueue and a LocalQueue marked Active
// (their controllers); a Job in that LocalQueue, whose Workload (the job
// controller) the scheduler found no quota for (the ClusterQueue has none):
// its QuotaReserved condition says Pending; a Job in a LocalQueue that
// does not exist, whose Workload the workload controller marks
// Inadmissible.

// probeNamespace holds the probes.
const probeNamespace = "batkube-system"

// ControllersReadyTimeout bounds the wait for the controllers' answers.
const ControllersReadyTimeout = 2 * time.Minute

// A probeSet is the probes of one controller process.
type probeSet struct {
	// process names the controller process in messages.
	process string
	// manifests are the probes, created in this order and deleted in the
	// reverse order once answered.
	manifests string
	// unanswered says which probes have not had their answer yet.
	unanswered func(r *run) []string
	// cleanup, if set, deletes what the controllers made of the probes,
	// once the probes are deleted.
	cleanup func(ctx context.Context, r *run) error
	// gone, if set, says which objects of the probes are still there
	// (their deletion waits for a controller's finalizer).
	gone func(r *run) []string
	// keep are the kinds not deleted after the answers (the namespace).
	keep []string
}

var controllerManagerProbes = probeSet{
	process: "kube-controller-manager",
	manifests: `
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
`,
	unanswered: (*run).unansweredControllerManagerProbes,
	// The ConfigMap's answer is its deletion.
	keep: []string{"Namespace", "ConfigMap"},
}

// The names of Kueue's probes.
const (
	kueueProbe       = "batkube-probe"
	kueueProbeQueued = "batkube-probe-queued"
	kueueProbeOrphan = "batkube-probe-orphan"
	kueueGroup       = "kueue.x-k8s.io"
	kueueActive      = "Active"
)

var kueueProbes = probeSet{
	process: "Kueue",
	manifests: `
apiVersion: v1
kind: Namespace
metadata: {name: batkube-system}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: batkube-probe}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: batkube-probe}
spec:
  namespaceSelector:
    matchLabels: {kubernetes.io/metadata.name: batkube-system}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: batkube-probe
      resources: [{name: cpu, nominalQuota: 0}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: batkube-probe, namespace: batkube-system}
spec: {clusterQueue: batkube-probe}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: batkube-probe-queued
  namespace: batkube-system
  labels: {kueue.x-k8s.io/queue-name: batkube-probe}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: probe, image: probe, resources: {requests: {cpu: 1m}}}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: batkube-probe-orphan
  namespace: batkube-system
  labels: {kueue.x-k8s.io/queue-name: batkube-probe-missing}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: probe, image: probe, resources: {requests: {cpu: 1m}}}]
`,
	unanswered: (*run).unansweredKueueProbes,
	cleanup:    func(ctx context.Context, r *run) error { return r.deleteKueueProbeWorkloads(ctx) },
	gone:       (*run).kueueProbesLeft,
	keep:       []string{"Namespace"},
}

var (
	jobsResource        = schema.GroupResource{Group: "batch", Resource: "jobs"}
	replicaSetsResource = schema.GroupResource{Group: "apps", Resource: "replicasets"}
	deploymentsResource = schema.GroupResource{Group: "apps", Resource: "deployments"}
	configMapsResource  = schema.GroupResource{Resource: "configmaps"}

	localQueuesGR     = schema.GroupResource{Group: kueueGroup, Resource: "localqueues"}
	resourceFlavorsGR = schema.GroupResource{Group: kueueGroup, Resource: "resourceflavors"}
)

// probeSets are the run's probes: kube-controller-manager's, then Kueue's.
func (r *run) probeSets() []probeSet {
	sets := []probeSet{controllerManagerProbes}
	if r.opts.AwaitKueue {
		sets = append(sets, kueueProbes)
	}
	return sets
}

// awaitControllers creates the probes, waits for the controllers' answers,
// then deletes the probes and waits until they are gone.
func (r *run) awaitControllers(ctx context.Context) error {
	sets := r.probeSets()
	docs := make([][]json.RawMessage, len(sets))
	for i, set := range sets {
		var err error
		if docs[i], err = apiserver.ManifestDocuments([]byte(set.manifests)); err != nil {
			return fmt.Errorf("%s's probes: %w", set.process, err)
		}
		for _, doc := range docs[i] {
			if _, err := r.api.CreateDocument(ctx, doc); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("%s's probes: %w", set.process, err)
			}
		}
	}
	start := time.Now()
	if err := r.awaitProbes(ctx, "answer", func() []string {
		var waiting []string
		for _, set := range sets {
			waiting = append(waiting, set.unanswered(r)...)
		}
		return waiting
	}); err != nil {
		return err
	}
	for i, set := range sets {
		for j := len(docs[i]) - 1; j >= 0; j-- {
			var head struct{ Kind string }
			if err := json.Unmarshal(docs[i][j], &head); err != nil {
				return fmt.Errorf("%s's probes: %w", set.process, err)
			}
			if containsString(set.keep, head.Kind) {
				continue
			}
			if _, err := r.api.DeleteDocument(ctx, docs[i][j]); err != nil {
				return fmt.Errorf("%s's probes: %w", set.process, err)
			}
		}
		if set.cleanup != nil {
			if err := set.cleanup(ctx, r); err != nil {
				return fmt.Errorf("%s's probes: %w", set.process, err)
			}
		}
	}
	if err := r.awaitProbes(ctx, "deletion", func() []string {
		var left []string
		for _, set := range sets {
			if set.gone != nil {
				left = append(left, set.gone(r)...)
			}
		}
		return left
	}); err != nil {
		return err
	}
	r.log.Info("the controllers run", "after", time.Since(start))
	return nil
}

// awaitProbes polls waiting (the store, in memory) until it says nothing,
// within ControllersReadyTimeout.
func (r *run) awaitProbes(ctx context.Context, what string, waiting func() []string) error {
	deadline := time.NewTimer(ControllersReadyTimeout)
	defer deadline.Stop()
	backoff := time.Millisecond
	for {
		left := waiting()
		if len(left) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("the controllers did not complete the %s of their probes within %s (are kube-controller-manager and Kueue running, with these controllers?): %s",
				what, ControllersReadyTimeout, strings.Join(left, "; "))
		case <-time.After(backoff):
			backoff = min(2*backoff, 50*time.Millisecond)
		}
	}
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// unansweredControllerManagerProbes says which of kube-controller-manager's
// probes have not had their answer yet.
func (r *run) unansweredControllerManagerProbes() []string {
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

// unansweredKueueProbes says which of Kueue's probes have not had their
// answer yet.
func (r *run) unansweredKueueProbes() []string {
	var waiting []string
	if !r.conditionTrue(clusterQueuesGR, "", kueueProbe, kueueActive) {
		waiting = append(waiting, "Kueue's ClusterQueue controller has not marked a ClusterQueue Active")
	}
	if !r.conditionTrue(localQueuesGR, probeNamespace, kueueProbe, kueueActive) {
		waiting = append(waiting, "Kueue's LocalQueue controller has not marked a LocalQueue Active")
	}
	queued, orphan := r.probeWorkload(kueueProbeQueued), r.probeWorkload(kueueProbeOrphan)
	switch reason, ok := quotaReservedReason(queued); {
	case queued == nil:
		waiting = append(waiting, "Kueue's job controller has not created the Workload of a Job")
	case !ok || reason != "Pending":
		waiting = append(waiting, "Kueue's scheduler has not tried to admit a Workload")
	}
	if reason, ok := quotaReservedReason(orphan); orphan != nil && (!ok || reason != "Inadmissible") {
		waiting = append(waiting, "Kueue's workload controller has not marked a Workload of a LocalQueue that does not exist Inadmissible")
	} else if orphan == nil {
		waiting = append(waiting, "Kueue's job controller has not created the Workload of a Job in a LocalQueue that does not exist")
	}
	return waiting
}

// deleteKueueProbeWorkloads deletes the Workloads of Kueue's probe Jobs
// (a deleted Job orphans its Workload, as batch/v1 Jobs' deletion does by
// default).
func (r *run) deleteKueueProbeWorkloads(ctx context.Context) error {
	for _, job := range []string{kueueProbeQueued, kueueProbeOrphan} {
		if w := r.probeWorkload(job); w != nil {
			if _, err := r.api.Delete(ctx, workloadsGR.WithVersion(w.GroupVersionKind().Version), probeNamespace, w.GetName()); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	return nil
}

// kueueProbesLeft says which of Kueue's probes are still there: their
// Workloads and queues go once Kueue has taken its finalizers off.
func (r *run) kueueProbesLeft() []string {
	var left []string
	for _, job := range []string{kueueProbeQueued, kueueProbeOrphan} {
		if w := r.probeWorkload(job); w != nil {
			left = append(left, "the Workload "+w.GetName())
		}
	}
	for _, q := range []struct {
		gr        schema.GroupResource
		namespace string
	}{{localQueuesGR, probeNamespace}, {clusterQueuesGR, ""}, {resourceFlavorsGR, ""}} {
		if _, err := r.store.Get(q.gr, q.namespace, kueueProbe); err == nil {
			left = append(left, fmt.Sprintf("the %s %s", q.gr, kueueProbe))
		}
	}
	return left
}

// probeWorkload is the Workload Kueue made for the probe Job named job (nil
// if none yet).
func (r *run) probeWorkload(job string) *unstructured.Unstructured {
	list, err := r.store.List(workloadsGR, store.ListOptions{Selection: store.Selection{Namespace: probeNamespace}})
	if err != nil {
		return nil
	}
	for _, st := range list.Items {
		u, ok := st.Object().(*unstructured.Unstructured)
		if !ok {
			continue
		}
		for _, ref := range u.GetOwnerReferences() {
			if ref.Kind == "Job" && ref.Name == job {
				return u
			}
		}
	}
	return nil
}

// conditionTrue: the custom object's status has the condition, true.
func (r *run) conditionTrue(gr schema.GroupResource, namespace, name, condition string) bool {
	st, err := r.store.Get(gr, namespace, name)
	if err != nil {
		return false
	}
	u, ok := st.Object().(*unstructured.Unstructured)
	if !ok {
		return false
	}
	status, ok := conditionStatus(u, condition)
	return ok && status == string(corev1.ConditionTrue)
}

// quotaReservedReason is the reason of a Workload's QuotaReserved
// condition (ok false without one).
func quotaReservedReason(u *unstructured.Unstructured) (reason string, ok bool) {
	if u == nil {
		return "", false
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == workloadQuotaReserved {
			reason, _ := m["reason"].(string)
			return reason, true
		}
	}
	return "", false
}

// conditionStatus is the status of a custom object's condition.
func conditionStatus(u *unstructured.Unstructured, condition string) (string, bool) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == condition {
			s, _ := m["status"].(string)
			return s, true
		}
	}
	return "", false
}
