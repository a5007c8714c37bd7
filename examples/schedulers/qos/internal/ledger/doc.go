// Package ledger keeps the quality-of-service accounts of pod controllers,
// after the QoS-driven scheduling policy of da Silva, Brasileiro, Lopes et
// al. ("QoS-driven scheduling in the cloud", Journal of Internet Services
// and Applications 11, 2020).
//
// Every pod belongs to a controller that has a service-level objective
// (SLO): the fraction of its pods' lifetime they should spend running
// rather than waiting. Each pod of a controller is, at any instant, in one
// phase: Pending (waiting in the scheduler's queue, from its creation),
// Binding (from the moment the scheduler starts binding it until it runs),
// Running, or Ended. A controller's account sums, over all its pods past
// and present, the time spent in each phase up to an instant:
//
//	QoS = running / (running + waiting + binding)
//	TTV = running / SLO − (running + waiting + binding)
//
// TTV, the time to violation, is the waiting time the controller can still
// absorb before its QoS falls below its SLO (for a single pod waiting, the
// number of seconds before the violation); it is negative once the SLO is
// violated, the more so the further the controller is from recovering.
// The policy serves the controller with the smallest TTV first.
//
// TTV changes continuously with time and not at all at the instant of an
// event: a phase that ends at an instant has accumulated exactly what it
// would have had it gone on. So the order of controllers is a function of
// the instant alone, which keeps a scheduling queue's heap consistent while
// events of that instant are applied.
//
// Instants are given by the caller (simulated time in a Batkube run); the
// ledger never reads a clock. It is safe for concurrent use.
package ledger
