// Package kubescheduler is the exact settle policy for an unmodified
// kube-scheduler: it reads the scheduler's own state from its metrics
// endpoint and decides that the scheduler has nothing left to do at the
// current simulated instant only when that state and the cluster agree.
//
// # The signals, and why together they leave no race
//
// Read from k8s.io/kubernetes v1.37.1, pkg/scheduler (eventhandlers.go,
// schedule_one.go, backend/queue, metrics):
//
//   - scheduler_pending_pods{queue}: the pods in each queue. active and
//     backoff must be empty. With SchedulerPopFromBackoffQ (on by default
//     since 1.33) a pod in backoff is popped as soon as the active queue is
//     empty, so a non-empty backoff queue is work about to be done; on
//     older schedulers it is work waiting for a real-time back-off (1 to
//     10 s), which the policy waits out too.
//   - Conservation: the pods waiting in the other queues (unschedulable,
//     gated, and the pod-group queues incomplete and pending) must be
//     exactly the unbound pods of the scheduler's schedulerNames that the
//     cluster holds. A pod popped for a scheduling cycle sits in no queue
//     until the cycle ends (it is bound, or goes back to a queue), and a
//     pod created but not yet seen by the scheduler's informer is in none
//     either: both make the counts differ. The gated queue must hold
//     exactly the pods with scheduling gates: a pod gated by an async
//     preemption in progress makes it differ.
//   - scheduler_goroutines{operation}: binding cycles (a bound pod's
//     binding goroutine runs until its API call has returned) and the
//     scheduler's parallel work must all have ended;
//     scheduler_pending_async_api_calls must be 0.
//   - Handled events: a finished pod frees room, but until the scheduler
//     has handled its deletion it still counts the pod on its node, and the
//     unschedulable pods the deletion would move are still unschedulable.
//     kube-scheduler 1.37 records scheduler_event_handling_duration_seconds
//     on the way out of each handler, with the event as label: the count of
//     AssignedPodDelete must have reached the number of assigned pods that
//     left the scheduler's informer (its pods are those with
//     status.phase!=Succeeded,status.phase!=Failed), NodeAdd the number of
//     nodes created, NodeDelete those deleted, and NodeUpdateNodeTaint the
//     node updates that change taints, plus those that make a node
//     schedulable again (1.37 records that label for both).
//   - Pod groups (GenericWorkload): kube-scheduler 1.37 puts a pod group it
//     could not place back into its back-off queue rather than the
//     unschedulable one, and retries it on its own clock for ever. Pods of
//     groups in back-off are therefore not work about to be done but
//     retries, which are pointless once each group has been attempted after
//     room was last freed: scheduler_podgroup_schedule_attempts_total counts
//     the attempts, and with equal initial and maximum back-offs the groups
//     are retried in turn (groupRetries gives the argument).
//
// A scrape is no snapshot, though: client_golang gathers the families
// concurrently, so one scrape may read the queues before a handler moved
// pods and the counts after it recorded its event. The counts of a scrape
// therefore prove the events handled only for the scrapes that start after
// it — or, better, when the scheduler's process was seen quiescent (no
// thread ran; package procquiet) after every event had been written to its
// watch connections (Options.Delivered): then no handler could run during
// the scrape, and one scrape is enough.
//
// Versions without the handled-event counts (kube-scheduler 1.18) rely on
// that second barrier alone. When the scheduler's process cannot be
// watched (it runs on another machine), 1.37 falls back on two scrapes, and
// 1.18 is read without proof: the policy warns that settling is not exact.
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
// ask then). On the 1,500-job contended workload that is one scrape per
// step. Silence and quiescence only pace the scrapes: the verdict comes
// from the scrape.
//
// # Authentication
//
// kube-scheduler's secure port authenticates the scrape's bearer token with
// a TokenReview and authorises it with a SubjectAccessReview, both sent to
// the API server it is configured with (--authentication-kubeconfig,
// --authorization-kubeconfig): Batkube answers them, for the token it gives
// this policy.
package kubescheduler
