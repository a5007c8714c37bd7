package kubescheduler

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/batkube/batkube/pkg/store"
)

// expected is what the scheduler must have seen, kept from every change of
// pods and nodes.
type expected struct {
	names map[string]bool // the scheduler's schedulerNames
	// unbound counts the pods the scheduler must hold in its queues: in
	// its informer's view, not assigned, of one of its names; gated those
	// of them with scheduling gates.
	unbound, gated int
	// gangs counts the waiting pods of each pod group (namespace/name of
	// their spec.schedulingGroup), gangPods all of them: kube-scheduler
	// 1.37 retries a pod group it could not place on a real-time back-off
	// rather than parking it until an event (see Policy).
	gangs    map[string]int
	gangPods int
	// Events the scheduler must have handled (cumulative), by the label of
	// scheduler_event_handling_duration_seconds; version counts the changes
	// of handled.
	handled map[string]float64
	version uint64
}

// expect records one more event the scheduler must handle.
func (e *expected) expect(label string) {
	e.handled[label]++
	e.version++
}

func newExpected(names []string) *expected {
	e := &expected{names: map[string]bool{}, handled: map[string]float64{}, gangs: map[string]int{}}
	for _, n := range names {
		e.names[n] = true
	}
	return e
}

// inView reports whether kube-scheduler's pod informer holds pod: its
// field selector is status.phase!=Succeeded,status.phase!=Failed.
func inView(pod *corev1.Pod) bool {
	return pod != nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

func assigned(pod *corev1.Pod) bool { return pod != nil && pod.Spec.NodeName != "" }

// waiting reports whether pod should be in one of the scheduler's queues.
func (e *expected) waiting(pod *corev1.Pod) bool {
	return inView(pod) && !assigned(pod) && e.names[pod.Spec.SchedulerName]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// observe takes in one change.
func (e *expected) observe(c store.Change) {
	switch c.GR.Resource {
	case "pods":
		prev, cur := podOf(c.Prev), podOf(c.Object)
		if c.Type == watch.Deleted {
			cur = nil
		}
		e.unbound += b2i(e.waiting(cur)) - b2i(e.waiting(prev))
		e.gated += b2i(e.waiting(cur) && len(cur.Spec.SchedulingGates) > 0) - b2i(e.waiting(prev) && len(prev.Spec.SchedulingGates) > 0)
		e.countGang(prev, -1)
		e.countGang(cur, +1)
		if inView(prev) && assigned(prev) && !(inView(cur) && assigned(cur)) {
			e.expect(eventAssignedPodDelete)
		}
	case "nodes":
		prev, cur := nodeOf(c.Prev), nodeOf(c.Object)
		switch c.Type {
		case watch.Added:
			e.expect(eventNodeAdd)
		case watch.Deleted:
			e.expect(eventNodeDelete)
		default:
			if prev == nil || cur == nil {
				return
			}
			if !equality.Semantic.DeepEqual(prev.Spec.Taints, cur.Spec.Taints) {
				e.expect(eventNodeTaint)
			}
			if prev.Spec.Unschedulable && !cur.Spec.Unschedulable {
				e.expect(eventNodeTaint)
			}
		}
	}
}

// countGang adds delta to the count of pod's group if pod is waiting and
// belongs to one.
func (e *expected) countGang(pod *corev1.Pod, delta int) {
	if !e.waiting(pod) {
		return
	}
	g := pod.Spec.SchedulingGroup
	if g == nil || g.PodGroupName == nil {
		return
	}
	key := pod.Namespace + "/" + *g.PodGroupName
	e.gangPods += delta
	if e.gangs[key] += delta; e.gangs[key] <= 0 {
		delete(e.gangs, key)
	}
}

func podOf(st *store.Stored) *corev1.Pod {
	if st == nil {
		return nil
	}
	p, _ := st.Object().(*corev1.Pod)
	return p
}

func nodeOf(st *store.Stored) *corev1.Node {
	if st == nil {
		return nil
	}
	n, _ := st.Object().(*corev1.Node)
	return n
}
