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
	// watchStart is the resourceVersion the scheduler's first watch of
	// each resource started from, once known; unfolded the update and
	// delete events counted before it was known. An informer that lists
	// after a change gets it folded into the state it lists (a node
	// tainted at the first instant, before the scheduler's informers
	// listed, is a node added, tainted: no NodeUpdateNodeTaint), so such
	// events are taken back once the start is known to be after them.
	watchStart map[string]uint64
	unfolded   map[string][]pendingEvent
	// roomRV is the resourceVersion of the latest change that may have
	// made room for waiting pods: a pod left a node, a node was added or
	// made schedulable, its taints changed.
	roomRV uint64
	// nodes holds each node's allocatable and what the pods assigned to
	// it (in the scheduler's view) request: the room a group may fit in.
	nodes map[string]*room
}

// pendingEvent is an event counted before the start of the scheduler's
// watch of its resource was known.
type pendingEvent struct {
	label string
	rv    uint64
}

// room is a node's allocatable and the requests of its pods.
type room struct{ alloc, used podres.List }

// group is what the policy knows of one pod group.
type group struct {
	// waiting counts its pods that should be in the scheduler's queues,
	// assigned those bound to nodes (in the scheduler's view).
	waiting, assigned int
	// exists: the PodGroup object is in the cluster; owned: the broker
	// created it held and acts on it (Hold).
	exists, owned bool
	// minCount is its gang's (1 for a group without a gang policy).
	minCount int
	// releasedRV is the resourceVersion at which it last became
	// schedulable (created, or its minCount lowered, to at most its
	// pods); needRV that of the latest change after which the scheduler
	// must attempt it again: one of its pods added, an error in its last
	// attempt.
	releasedRV, needRV uint64
	// errors counts the attempts in a row that ended in an error before
	// the fit was known, since room was last freed; once above
	// maxErrorReleases the group is left to the scheduler's own retries,
	// and the steps that end with it waiting are not proven.
	errors int
	// errorRoomRV is the roomRV of the latest such error.
	errorRoomRV uint64
	// members holds the requests of its waiting pods, by name.
	members map[string]podres.List
}

// held reports whether the scheduler keeps the group gated: its gang asks
// for more pods than it has (GangScheduling's PreEnqueue).
func (g *group) held() bool { return g.exists && g.minCount > g.waiting+g.assigned }

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

// expectChange records an update or a deletion of resource (pods, nodes,
// podgroups) at resourceVersion rv, which the scheduler handles as an
// event only if its watch of the resource started before it.
func (e *expected) expectChange(resource, label string, rv uint64) {
	if start, ok := e.watchStart[resource]; ok {
		if rv > start {
			e.expect(label)
		}
		return
	}
	e.expect(label)
	e.unfolded[resource] = append(e.unfolded[resource], pendingEvent{label, rv})
}

// freedChange is expectChange for an event that may make room.
func (e *expected) freedChange(resource, label string, rv uint64) {
	e.expectChange(resource, label, rv)
	e.roomRV = max(e.roomRV, rv)
}

// learnWatchStart records the start of the scheduler's first watch of
// resource and takes back the events counted before it that its list
// folded.
func (e *expected) learnWatchStart(resource string, rv uint64) {
	if _, ok := e.watchStart[resource]; ok {
		return
	}
	e.watchStart[resource] = rv
	for _, p := range e.unfolded[resource] {
		if p.rv <= rv {
			e.handled[p.label]--
			e.version++
		}
	}
	delete(e.unfolded, resource)
}

func newExpected(names []string) *expected {
	e := &expected{names: map[string]bool{}, handled: map[string]float64{}, groups: map[settle.GroupRef]*group{}, nodes: map[string]*room{},
		watchStart: map[string]uint64{}, unfolded: map[string][]pendingEvent{}}
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
		e.member(prev, cur, c.RV)
		e.place(prev, -1)
		e.place(cur, +1)
		if inView(prev) && assigned(prev) && !(inView(cur) && assigned(cur)) {
			e.freedChange("pods", eventAssignedPodDelete, c.RV)
		}
	case "nodes":
		prev, cur := nodeOf(c.Prev), nodeOf(c.Object)
		switch c.Type {
		case watch.Added:
			e.freed(eventNodeAdd, c.RV)
		case watch.Deleted:
			e.expectChange("nodes", eventNodeDelete, c.RV)
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
				e.freedChange("nodes", eventNodeTaint, c.RV)
			}
			if prev.Spec.Unschedulable && !cur.Spec.Unschedulable {
				e.freedChange("nodes", eventNodeTaint, c.RV)
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
			g.exists, g.minCount = true, minCount(pg)
			if !g.held() {
				g.releasedRV = c.RV
			}
			e.expect(eventPodGroupAdd)
		case watch.Deleted:
			g.exists = false
			e.expectChange("podgroups", eventPodGroupDelete, c.RV)
		default:
			wasHeld := g.held()
			g.minCount = minCount(pg)
			if wasHeld && !g.held() {
				g.releasedRV = c.RV
			}
			e.expectChange("podgroups", eventPodGroupUpdate, c.RV)
			prev := podGroupOf(c.Prev)
			switch {
			case scheduledCondition(pg) == nil:
				// Batkube's own writes (released, held again): no attempt yet.
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

// minCount is a pod group's gang minCount (1 without a gang policy).
func minCount(pg *schedulingv1beta1.PodGroup) int {
	if gang := pg.Spec.SchedulingPolicy.Gang; gang != nil {
		return int(gang.MinCount)
	}
	return 1
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
	if g.waiting == 0 && g.assigned <= 0 && !g.exists {
		delete(e.groups, ref)
	}
}

// own records that the broker created ref held and acts on it.
func (e *expected) own(ref settle.GroupRef) { e.group(ref).owned = true }

// member follows the waiting pods of pod groups through a change of a pod
// from prev to cur (nil: absent): a pod that starts waiting in a group
// at rv makes the group need an attempt with it.
func (e *expected) member(prev, cur *corev1.Pod, rv uint64) {
	prevRef, wasMember := e.groupOf(prev)
	curRef, isMember := e.groupOf(cur)
	if wasMember && isMember && prevRef == curRef {
		e.groups[curRef].members[cur.Name] = podres.Requests(cur)
		return
	}
	if wasMember {
		g := e.group(prevRef)
		g.waiting--
		delete(g.members, prev.Name)
		e.dropIfIdle(prevRef, g)
	}
	if isMember {
		g := e.group(curRef)
		g.waiting++
		if g.members == nil {
			g.members = map[string]podres.List{}
		}
		g.members[cur.Name] = podres.Requests(cur)
		g.needRV = max(g.needRV, rv)
	}
}

// groupOf returns the group of pod if it waits in one.
func (e *expected) groupOf(pod *corev1.Pod) (settle.GroupRef, bool) {
	if !e.waiting(pod) {
		return settle.GroupRef{}, false
	}
	g := pod.Spec.SchedulingGroup
	if g == nil || g.PodGroupName == nil {
		return settle.GroupRef{}, false
	}
	return settle.GroupRef{Namespace: pod.Namespace, Name: *g.PodGroupName}, true
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
	if g.owned {
		need = g.waiting // Batkube's gangs: all their pods, whatever minCount holds them
	}
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

// actions returns the releases of the groups the broker holds that the
// scheduler must attempt at this instant: every one that may fit since a
// change that may let it (room freed, a pod of its added, an error in its
// last attempt; fitOnly: and minCount of its pods fit by their requests,
// mayFit), in name order. A group released already, which the scheduler
// keeps on its back-off after a failed attempt, is renewed first.
func (e *expected) actions(fitOnly bool) []settle.GroupAction {
	var out []settle.GroupAction
	for ref, g := range e.groups {
		if !g.owned || !g.exists || g.waiting == 0 {
			continue
		}
		never := g.releasedRV == 0
		if !never && max(e.roomRV, g.needRV) <= g.releasedRV || fitOnly && !e.mayFit(g) {
			continue
		}
		out = append(out, settle.GroupAction{Group: ref, Renew: !g.held()})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group.Namespace != out[j].Group.Namespace {
			return out[i].Group.Namespace < out[j].Group.Namespace
		}
		return out[i].Group.Name < out[j].Group.Name
	})
	return out
}

// heldPods counts the waiting pods of the groups the scheduler keeps
// gated (group.held): its gated queue holds them.
func (e *expected) heldPods() int {
	n := 0
	for _, g := range e.groups {
		if g.held() {
			n += g.waiting
		}
	}
	return n
}

// stale returns a waiting pod group that Batkube does not hold, created
// before a change that may let it fit ("" if none): the scheduler retries
// such a group on its own real-time back-off only.
func (e *expected) stale() string {
	for ref, g := range e.groups {
		if !g.owned && g.exists && !g.held() && g.waiting > 0 && max(e.roomRV, g.needRV) > g.releasedRV {
			return ref.String()
		}
	}
	return ""
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
