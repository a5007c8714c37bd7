// Package qosdriven is a kube-scheduler framework plugin after the
// QoS-driven scheduling policy of da Silva, Brasileiro, Lopes et al.
// ("QoS-driven scheduling in the cloud", JISA 11, 2020): the profile's
// QueueSort orders pending pods by their controller's time to violation of
// its service-level objective, most urgent first (package ledger defines
// the accounts). Register it with
//
//	app.NewSchedulerCommand(app.WithPlugin(qosdriven.Name, qosdriven.New))
//
// and enable it at queueSort (it replaces PrioritySort), preEnqueue,
// reserve, preBind and postBind of a profile. A pod's controller is named
// by a label (qos.batkube.io/controller), else its controlling owner, else
// the pod stands alone; its SLO is an annotation or label
// (qos.batkube.io/slo: "0.9"), else Args.DefaultSLO.
//
// Bookkeeping, in the time of the cluster (simulated in a Batkube run,
// package simtime): a pod waits from its creation until PreBind, binds from
// PreBind until it runs (its status's startTime: in Batkube the instant
// Batsim starts its job), runs until its containers finish or it is
// deleted. Unreserve (a failed binding) makes it wait again. The plugin
// watches pods through the scheduler's own informer. Less does no I/O:
// PreEnqueue reads the clock, once per change of the informers' stores, and
// admits the pod.
//
// With Args.DebugAddress set, GET / on that address prints the table
// CONTROLLER, QOS/SLO, TTV, RUNNING, WAITING, BINDING (and the pods pending,
// binding and running) at the current time; ?output=json gives it as JSON.
package qosdriven
