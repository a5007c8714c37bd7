package openb

// PriorityClass is the PriorityClass a quality of service maps to.
type PriorityClass struct {
	Name        string
	Value       int32
	Description string
}

// QoSClass maps the trace's qos column onto a PriorityClass: the
// latency-sensitive pods (LS) first, then Guaranteed, Burstable and the
// best-effort ones (BE). The classes never preempt (preemptionPolicy
// Never): the trace records no preemption, and a simulated pod evicted by
// kube-scheduler would end its job as failed; their values only order
// kube-scheduler's queue. A qos outside these four has no class (ok
// false): its pods get priority 0.
func QoSClass(qos string) (c PriorityClass, ok bool) {
	switch qos {
	case "LS":
		return PriorityClass{Name: "openb-latency-sensitive", Value: 4000, Description: "pods of qos LS (latency-sensitive) in the openb trace"}, true
	case "Guaranteed":
		return PriorityClass{Name: "openb-guaranteed", Value: 3000, Description: "pods of qos Guaranteed in the openb trace"}, true
	case "Burstable":
		return PriorityClass{Name: "openb-burstable", Value: 2000, Description: "pods of qos Burstable in the openb trace"}, true
	case "BE":
		return PriorityClass{Name: "openb-best-effort", Value: 1000, Description: "pods of qos BE (best-effort) in the openb trace"}, true
	}
	return PriorityClass{}, false
}
