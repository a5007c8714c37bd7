// Package kubescheduler is the exact settle policy for an unmodified
// kube-scheduler: it reads the scheduler's own state from its metrics
// endpoint and decides that the scheduler has nothing left to do at the
// current simulated instant only when that state and the cluster agree.
// Where no proof exists, the step still ends but is reported as unproven,
// never as exact.
//
// # Each state of the scheduler, and what proves it idle
//
// Read from k8s.io/kubernetes v1.37.1, pkg/scheduler (eventhandlers.go,
// schedule_one.go, schedule_one_podgroup.go, backend/queue,
// framework/preemption, metrics):
//
//	state of the scheduler                    | signal that rules it out
//	------------------------------------------+---------------------------------------------------
//	a pod about to be attempted               | scheduler_pending_pods{queue="active"} = 0
//	a pod in back-off (about to be popped, or | scheduler_queued_entities{queue="backoff",type="pod"}
//	  waiting out an error's back-off)        |   = 0 (1.37; before, pending_pods{backoff} = 0)
//	a pod or group in a scheduling cycle, or  | conservation: the pods in its other queues equal the
//	  created and not seen yet                |   unbound pods of its schedulerNames in the cluster
//	an event (job end, node change, pod group | scheduler_event_handling_duration_seconds_count by
//	  created or deleted) not handled yet     |   event reached what the cluster's changes imply
//	a binding cycle or parallel plugin work   | scheduler_goroutines = 0
//	an asynchronous API call                  | scheduler_pending_async_api_calls = 0
//	an asynchronous preemption deleting its   | preemptions started (scheduler_preemption_victims
//	  victims                                 |   count) = goroutines ended (..._goroutines_execution_total)
//	a pod gated by a preemption in progress   | pending_pods{queue="gated"} = pods with scheduling gates
//	                                          |   + pods of the gangs Batkube holds
//	a pod group that could fit now, waiting   | none in the scheduler: Batkube releases it (below) and
//	  on its back-off                         |   waits for its attempt as for any pod's
//
// In more words:
//
//   - active and plain back-off queues must be empty. With
//     SchedulerPopFromBackoffQ (on by default since 1.33) a pod in the
//     back-off queue is popped as soon as the active queue is empty; a pod
//     that failed with an error (an extender answering 500, an API error)
//     sits in the error back-off instead, for a second or more of real
//     time: work all the same, waited for. kube-scheduler 1.37's
//     scheduler_queued_entities tells such pods from pod groups in the
//     same queue.
//   - Conservation: the pods waiting in the other queues (back-off for pod
//     groups, unschedulable, gated, and the pod-group queues incomplete
//     and pending) must be exactly the unbound pods of the scheduler's
//     schedulerNames that the cluster holds. A pod popped for a scheduling
//     cycle sits in no queue until the cycle ends (it is bound, or goes
//     back to a queue), and a pod created but not yet seen by the
//     scheduler's informer is in none either: both make the counts differ.
//     The gated queue must hold exactly the pods with scheduling gates.
//   - Handled events: a finished pod frees room, but until the scheduler
//     has handled its deletion it still counts the pod on its node.
//     kube-scheduler 1.37 records scheduler_event_handling_duration_seconds
//     on the way out of each handler, with the event as label: the count of
//     AssignedPodDelete must have reached the number of assigned pods that
//     left the scheduler's informer (its pods are those with
//     status.phase!=Succeeded,status.phase!=Failed), NodeAdd the nodes
//     created, NodeDelete those deleted, NodeUpdateNodeTaint the node
//     updates that change taints or make a node schedulable again, and
//     scheduling.k8s.io/PodGroupAdd and PodGroupDelete the pod groups
//     created and deleted (when GenericWorkload is on: the
//     kubernetes_feature_enabled metric says). An update or a deletion
//     made before the scheduler's first watch of its resource started (a
//     machine lost at the first instant, its node tainted before the
//     scheduler's informers listed the nodes) comes to the scheduler
//     folded into the state it lists, not as an event it handles: once the
//     API server says where that watch started (Options.WatchStart), such
//     events are not waited for. The counts are checked at
//     every step, also when the process barrier (below) holds: an informer
//     between two watches (client-go ends and reopens each every 5 to 10
//     minutes) has not been sent what happened meanwhile, which the
//     barrier cannot see.
//   - Goroutines: binding cycles (a bound pod's binding goroutine runs
//     until its API call has returned) and parallel plugin work are counted
//     by scheduler_goroutines; asynchronous API calls by
//     scheduler_pending_async_api_calls.
//   - Asynchronous preemption (SchedulerAsyncPreemption, on since 1.33):
//     the victims' PATCH and DELETE run in a goroutine no gauge counts,
//     while the preemptor is back in its queue. Each preemption observes
//     the victims' histogram once as it starts; each goroutine counts itself
//     in scheduler_preemption_goroutines_execution_total as it ends, after
//     its last API call. More started than ended is work in progress. (A
//     preemption whose victims are all terminating already starts no
//     goroutine: if the counts stay apart while the process is quiescent,
//     the difference is taken for such preemptions and that step is
//     reported as unproven.)
//
// # Pod groups: released, not waited for
//
// kube-scheduler 1.37 (GenericWorkload) puts a pod group it could not place
// in its error back-off queue (a group carries no rejecting plugin of its
// own), where no cluster event moves it and SchedulerPopFromBackoffQ does
// not pop it: it retries the group only when its back-off expires, 1 s
// doubling up to the maximum back-off times the square root of the group's
// size, of real time. Waiting for those retries made a run of gangs three
// times slower than real time, and proving them done by counting attempts
// was wrong when groups of several sizes wait (a small group retried twice
// passes for a big one retried once). Nor is a group that appears safe to
// attempt: AddPodGroup moves the pods the scheduler holds for it into the
// group one at a time, broadcasting after the first, and Pop takes only
// the active queue's lock, so an idle scheduler may pop the group with
// part of its pods (a 16-pod gang was attempted with 14, and failed).
//
// So Batkube owns its gangs' PodGroups, as a workload controller would,
// and decides when kube-scheduler attempts them. A gang's group is created
// held: a gang policy whose minCount is one more than the gang's pods, so
// that GangScheduling's PreEnqueue keeps it gated, with every pod the
// scheduler is given (a gated group is never popped). Once the scheduler
// is otherwise idle — everything above holds, and the gated queue holds
// the gang's pods — the policy releases it (Verdict.Groups): the broker
// lowers minCount to the gang's size (the field is mutable, for workload
// scaling), and the PodGroupUpdate event's queueing hint moves the whole
// group, all its pods, to the active queue, attempted at once; the policy
// then waits for that attempt as for any pod's. A released group that did
// not fit waits on the back-off; it is released again once the scheduler
// is idle after a change that may let it fit — room freed (a pod left a
// node, a node was added, made schedulable or given more allocatable), a
// pod of the group added, or an attempt that ended in an error before the
// fit was known (the scheduler's condition PodGroupInitiallyScheduled with
// reason SchedulerError; an error in a PodGroupPostFilter plugin comes
// after the group was found not to fit) — and renewed first: deleted and
// created held, then released, in one go (the scheduler's PodGroup
// informer hands it the three events in order, so the group is whole and
// gated before its release). A group is released again only if its pods
// fit by their requests on the nodes' free room (what NodeResourcesFit
// checks, an upper bound: affinity, taints and nominations only shrink it;
// Options.ReleaseAll releases every one). Room only shrinks otherwise
// (bindings), so a group attempted after the latest such change, and not
// placed, cannot fit at this instant. An attempt that keeps failing with
// errors (more than maxErrorReleases in a row at one state of the nodes)
// is left to the scheduler's own retries, and the steps that end with it
// waiting are reported as unproven, as are those with a waiting pod group
// that is not Batkube's (the scheduler retries it on its back-off only).
//
// # Barriers
//
// A scrape is no snapshot: client_golang gathers the families
// concurrently, so one scrape may read the queues before a handler moved
// pods and the counts after it recorded its event. The counts of a scrape
// therefore prove the events handled only for the scrapes that start after
// it — or for this one, when the scheduler's process was seen quiescent (no
// thread ran; package procquiet) after every event had been written to its
// watch connections (Options.Delivered): then no handler could run during
// the scrape.
//
// Versions without the handled-event counts (kube-scheduler 1.18) rely on
// that process barrier alone; the API server then also requires the
// scheduler's watches on pods (and nodes) to be open, so that an informer
// between two watches is not taken for one that has been told everything.
// When the scheduler's process cannot be watched (it runs on another
// machine), 1.37 falls back on two scrapes, and 1.18's steps end on the
// scrape alone and are reported as unproven. So is the step during which
// the scheduler restarted (its missed counts are forgiven, not proven).
//
// # Cost
//
// A scrape asks only for the families above (name[] filtering, which
// client_golang 1.24 in kube-scheduler 1.37 honours), but the scheduler
// still gathers its whole registry: some 2 to 5 ms of its CPU on this
// project's machine (its plugin histograms are most of it). So the policy
// scrapes only once the API has been quiet for a short gap after the
// scheduler's last write (MinGap), then only when its process is found
// quiescent (a look at /proc costs this side a fraction of a millisecond
// and the scheduler nothing), paces further scrapes by the pods still
// queued, and never scrapes while no pod is pending (the broker does not
// ask then). Silence and quiescence only pace the scrapes: the verdict
// comes from the scrape.
//
// # Authentication
//
// kube-scheduler's secure port authenticates the scrape's bearer token with
// a TokenReview and authorises it with a SubjectAccessReview, both sent to
// the API server it is configured with (--authentication-kubeconfig,
// --authorization-kubeconfig): Batkube answers them, for the token it gives
// this policy.
package kubescheduler
