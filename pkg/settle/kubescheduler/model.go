package kubescheduler

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/batkube/batkube/pkg/podres"
	"github.com/batkube/batkube/pkg/settle"
	"github.com/batkube/batkube/pkg/store"
)

// expected is what the scheduler must have seen, kept from every change of
// pods, nodes and pod groups.
type expected struct {
	names map[string]bool // the scheduler's schedulerNames
	// unbound counts the pods the scheduler must hold in its queues: in
	// its informer's view, not assigned, of one of its names; gated those
	// of them with scheduling gates.
	unbound, gated int
	// groups are the pod groups with waiting pods, or whose object
	// exists, or whose creation the broker holds back (Hold).
	groups map[settle.GroupRef]*group
	// Events the scheduler must have handled (cumulative), by the label of
	// scheduler_event_handling_duration_seconds; version counts the changes
	// of handled.
	handled map[string]float64
	version uint64
	// roomRV is the resourceVersion of the latest change that may have
	// made room for waiting pods: a pod left a node, a node was added or
	// made schedulable, its taints changed.
	roomRV uint64
	// nodes holds each node's allocatable and what the pods assigned to
	// it (in the scheduler's view) request: the room a group may fit in.
	nodes map[string]*room
}

// room is a node's allocatable and the requests of its pods.
type room struct{ alloc, used podres.List }

// group is what the policy knows of one pod group.
type group struct {
	// waiting counts its pods that should be in the scheduler's queues.
	waiting int
	// exists: the PodGroup object is in the cluster; held: the broker
	// holds back its creation until the policy releases it.
	exists, held bool
	// createdRV is the resourceVersion of the object's latest creation;
	// needRV that of the latest change after which the scheduler must
	// attempt the group again: one of its pods added, an error in its
	// last attempt.
	createdRV, needRV uint64
	// errors counts the attempts in a row that ended in an error before
	// the fit was known, since room was last freed; once above
	// maxErrorReleases the group is left to the scheduler's own retries,
	// and the steps that end with it waiting are not proven.
	errors int
	// errorRoomRV is the roomRV of the latest such error.
	errorRoomRV uint64
	// members holds the requests of its waiting pods, by name; minCount
	// is its gang's (1 for a group without a gang policy).
	members  map[string]podres.List
	minCount int
	// assigned counts its pods bound to nodes (in the scheduler's view).
	assigned int
}

// maxErrorReleases bounds the releases of a group whose attempts end in
// errors at one state of the nodes (an extender that keeps failing).
const maxErrorReleases = 2

// expect records one more event the scheduler must handle.
func (e *expected) expect(label string) {
	e.handled[label]++
	e.version++
}

// freed records an event that may make room, at resourceVersion rv.
func (e *expected) freed(label string, rv uint64) {
	e.expect(label)
	e.roomRV = max(e.roomRV, rv)
}

func newExpected(names []string) *expected {
	e := &expected{names: map[string]bool{}, handled: map[string]float64{}, groups: map[settle.GroupRef]*group{}, nodes: map[string]*room{}}
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
		e.countMember(prev, -1, c.RV)
		e.countMember(cur, +1, c.RV)
		e.place(prev, -1)
		e.place(cur, +1)
		if inView(prev) && assigned(prev) && !(inView(cur) && assigned(cur)) {
			e.freed(eventAssignedPodDelete, c.RV)
		}
	case "nodes":
		prev, cur := nodeOf(c.Prev), nodeOf(c.Object)
		switch c.Type {
		case watch.Added:
			e.freed(eventNodeAdd, c.RV)
		case watch.Deleted:
			e.expect(eventNodeDelete)
		}
		if cur != nil {
			if c.Type == watch.Deleted {
				delete(e.nodes, cur.Name)
			} else if r := e.nodes[cur.Name]; r == nil {
				e.nodes[cur.Name] = &room{alloc: podres.Of(cur.Status.Allocatable), used: podres.List{}}
			} else if !equality.Semantic.DeepEqual(prev.Status.Allocatable, cur.Status.Allocatable) {
				r.alloc = podres.Of(cur.Status.Allocatable)
				e.roomRV = max(e.roomRV, c.RV)
			}
		}
		switch c.Type {
		case watch.Added, watch.Deleted:
		default:
			if prev == nil || cur == nil {
				return
			}
			if !equality.Semantic.DeepEqual(prev.Spec.Taints, cur.Spec.Taints) {
				e.freed(eventNodeTaint, c.RV)
			}
			if prev.Spec.Unschedulable && !cur.Spec.Unschedulable {
				e.freed(eventNodeTaint, c.RV)
			}
		}
	case "podgroups":
		pg := podGroupOf(c.Object)
		if pg == nil {
			return
		}
		ref := settle.GroupRef{Namespace: pg.Namespace, Name: pg.Name}
		g := e.group(ref)
		switch c.Type {
		case watch.Added:
			g.exists, g.held, g.createdRV = true, false, c.RV
			g.minCount = 1
			if gang := pg.Spec.SchedulingPolicy.Gang; gang != nil {
				g.minCount = int(gang.MinCount)
			}
			e.expect(eventPodGroupAdd)
		case watch.Deleted:
			g.exists = false
			e.expect(eventPodGroupDelete)
		default:
			prev := podGroupOf(c.Prev)
			switch {
			case !schedulerError(pg):
				g.errors = 0 // attempted to the end: whether it fits is known
			case schedulerError(prev) && errorMessage(prev) == errorMessage(pg):
			case g.errorRoomRV != e.roomRV:
				g.errors, g.errorRoomRV, g.needRV = 1, e.roomRV, c.RV
			default:
				if g.errors++; g.errors <= maxErrorReleases {
					g.needRV = c.RV
				}
			}
		}
		e.dropIfIdle(ref, g)
	}
}

// schedulerError reports whether the scheduler's last attempt of the
// group ended in an error before it knew whether the group fits: it then
// retries the group on its own back-off. An error in a PodGroupPostFilter
// plugin comes after the group was found not to fit (kube-scheduler 1.37's
// DynamicResources plugin fails there when the pods' results came from
// its batching cache): no error for the question of the fit.
func schedulerError(pg *schedulingv1beta1.PodGroup) bool {
	c := scheduledCondition(pg)
	return c != nil && c.Reason == schedulingv1beta1.PodGroupReasonSchedulerError &&
		!strings.Contains(c.Message, "PodGroupPostFilter plugins")
}

func errorMessage(pg *schedulingv1beta1.PodGroup) string {
	if c := scheduledCondition(pg); c != nil {
		return c.Message
	}
	return ""
}

func scheduledCondition(pg *schedulingv1beta1.PodGroup) *metav1.Condition {
	if pg == nil {
		return nil
	}
	return apimeta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled)
}

// failing returns a waiting pod group whose attempts keep failing with
// errors ("" if none): the scheduler retries it on its own back-off, and
// whether such a retry would place it at this instant is not known.
func (e *expected) failing() string {
	for ref, g := range e.groups {
		if g.waiting > 0 && g.exists && g.errors > maxErrorReleases && g.errorRoomRV == e.roomRV {
			return ref.String()
		}
	}
	return ""
}

// group returns the state of ref, made if needed.
func (e *expected) group(ref settle.GroupRef) *group {
	g := e.groups[ref]
	if g == nil {
		g = &group{}
		e.groups[ref] = g
	}
	return g
}

// dropIfIdle forgets a group with nothing left to know.
func (e *expected) dropIfIdle(ref settle.GroupRef, g *group) {
	if g.waiting == 0 && g.assigned <= 0 && !g.exists && !g.held {
		delete(e.groups, ref)
	}
}

// hold records that the broker holds back the creation of ref.
func (e *expected) hold(ref settle.GroupRef) {
	if g := e.group(ref); !g.exists {
		g.held = true
	}
}

// countMember adds delta to the waiting pods of pod's group if pod is
// waiting and belongs to one; a waiting pod that joins at rv makes the
// group need an attempt with it.
func (e *expected) countMember(pod *corev1.Pod, delta int, rv uint64) {
	if !e.waiting(pod) {
		return
	}
	g := pod.Spec.SchedulingGroup
	if g == nil || g.PodGroupName == nil {
		return
	}
	ref := settle.GroupRef{Namespace: pod.Namespace, Name: *g.PodGroupName}
	st := e.group(ref)
	st.waiting += delta
	if delta > 0 {
		st.needRV = max(st.needRV, rv)
		if st.members == nil {
			st.members = map[string]podres.List{}
		}
		st.members[pod.Name] = podres.Requests(pod)
	} else {
		delete(st.members, pod.Name)
	}
	e.dropIfIdle(ref, st)
}

// place adds (delta +1) or takes (-1) the requests of pod to or from its
// node's room, if the scheduler counts it there.
func (e *expected) place(pod *corev1.Pod, delta int) {
	if !inView(pod) || !assigned(pod) {
		return
	}
	if g := pod.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil {
		ref := settle.GroupRef{Namespace: pod.Namespace, Name: *g.PodGroupName}
		if st := e.groups[ref]; st != nil || delta > 0 {
			st = e.group(ref)
			st.assigned += delta
			e.dropIfIdle(ref, st)
		}
	}
	r := e.nodes[pod.Spec.NodeName]
	if r == nil {
		return // a node the cluster does not have: counts nowhere
	}
	if delta > 0 {
		r.used.Add(podres.Requests(pod))
	} else {
		r.used.Sub(podres.Requests(pod))
	}
}

// mayFit reports whether the waiting pods of g may fit on the nodes' free
// room by their requests alone (what NodeResourcesFit checks): at least
// minCount of them, counting on each node as many as its room holds of the
// smallest request of each resource. An upper bound: affinity, taints,
// nominations and placement can only make room smaller.
func (e *expected) mayFit(g *group) bool {
	smallest := podres.List{}
	first := true
	for _, req := range g.members {
		for name, v := range req {
			if cur, ok := smallest[name]; first || !ok || v < cur {
				smallest[name] = v
			}
		}
		for name := range smallest {
			if _, ok := req[name]; !ok {
				delete(smallest, name) // a pod that asks none of it
			}
		}
		first = false
	}
	need := max(g.minCount-g.assigned, 1)
	slots := 0
	for _, r := range e.nodes {
		n := -1 // unbounded
		for name, v := range smallest {
			if v <= 0 {
				continue
			}
			free := max(r.alloc[name]-r.used[name], 0)
			if k := int(free / v); n < 0 || k < n {
				n = k
			}
		}
		if n < 0 {
			return true // asks nothing a node counts
		}
		if slots += n; slots >= need {
			return true
		}
	}
	return false
}

// gangPods counts the waiting pods that belong to pod groups.
func (e *expected) gangPods() int {
	n := 0
	for _, g := range e.groups {
		n += g.waiting
	}
	return n
}

// releases returns the pod groups with waiting pods that the scheduler
// must attempt (again) now, in name order: those the broker holds back
// (create) if create, and those created before the latest change that may
// let them fit (room freed, a pod of theirs added, an error in their last
// attempt) if recreate — but for those that cannot fit by their pods'
// requests if fitOnly (mayFit).
func (e *expected) releases(create, recreate, fitOnly bool) []settle.GroupRef {
	var out []settle.GroupRef
	for ref, g := range e.groups {
		switch {
		case g.waiting == 0:
		case !g.exists && g.held && create:
			out = append(out, ref)
		case g.exists && recreate && g.createdRV < max(e.roomRV, g.needRV) && (!fitOnly || e.mayFit(g)):
			out = append(out, ref)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
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

func podGroupOf(st *store.Stored) *schedulingv1beta1.PodGroup {
	if st == nil {
		return nil
	}
	g, _ := st.Object().(*schedulingv1beta1.PodGroup)
	return g
}
