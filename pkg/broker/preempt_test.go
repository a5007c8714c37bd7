package broker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/broker"
)

// preempt does to pod w-1 what kube-scheduler does to a victim: marks it a
// disruption target, then deletes it.
func (h *harness) preempt(name string) {
	h.t.Helper()
	pods := h.cs.CoreV1().Pods("default")
	pod, err := pods.Get(h.ctx, name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget,
		Status: corev1.ConditionTrue, Reason: corev1.PodReasonPreemptionByScheduler, Message: "test: preempting"})
	if _, err := pods.UpdateStatus(h.ctx, pod, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
	if err := pods.Delete(h.ctx, name, metav1.DeleteOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

func decisionsOf(m batsim.Message) (kills []batsim.JobID, registered []batsim.RegisterJob) {
	for _, ev := range m.Events {
		switch d := ev.Data.(type) {
		case batsim.KillJob:
			kills = append(kills, d.JobIDs...)
		case batsim.RegisterJob:
			registered = append(registered, d)
		}
	}
	return kills, registered
}

func TestPreemptedJobIsKilled(t *testing.T) {
	h := startOnNode0(t, broker.Options{Quiet: 50 * time.Millisecond})
	h.send(1, submitted("w!1"))
	h.preempt("w-1")
	kills, registered := decisionsOf(h.send(2, batsim.RequestedCall{}))
	if len(kills) != 1 || kills[0] != "w!1" || len(registered) != 0 {
		t.Fatalf("after preempting w-1 (policy kill): kills %v, registered %v; want KILL_JOB w!1 only", kills, registered)
	}
	h.send(3, batsim.JobCompleted{JobID: "w!1", JobState: batsim.JobStateCompletedKilled, ReturnCode: -1},
		batsim.JobKilled{JobIDs: []batsim.JobID{"w!1"}})
	h.end(4)
}

func TestPreemptedJobIsResubmitted(t *testing.T) {
	h := start(t, broker.Options{Quiet: 50 * time.Millisecond, Preempted: broker.PreemptedResubmit})
	b := begins("node0")
	b.Config.DynamicJobsEnabled, b.Config.DynamicJobsAcknowledged = true, true
	h.send(0, b)
	h.send(1, submitted("w!1"), batsim.Notify{Type: batsim.NoMoreStaticJobToSubmit})
	h.preempt("w-1")
	r := h.send(2, batsim.RequestedCall{})
	kills, registered := decisionsOf(r)
	if len(kills) != 1 || kills[0] != "w!1" || len(registered) != 1 {
		t.Fatalf("after preempting w-1 (policy resubmit): kills %v, registered %v; want KILL_JOB w!1 and one REGISTER_JOB", kills, registered)
	}
	reg := registered[0]
	if reg.JobID != "w!1-r1" || reg.Job.Profile != "d10" || reg.Job.Res != 1 || reg.Job.Subtime != 2 {
		t.Errorf("registered %+v, want job w!1-r1 with profile d10, res 1, subtime 2", reg)
	}
	// The kill ends before Batsim acknowledges the new job: the run must
	// not say registration is over while the new job is on its way.
	r = h.send(2, batsim.JobCompleted{JobID: "w!1", JobState: batsim.JobStateCompletedKilled, ReturnCode: -1},
		batsim.JobKilled{JobIDs: []batsim.JobID{"w!1"}})
	for _, ev := range r.Events {
		if n, ok := ev.Data.(batsim.Notify); ok && n.Type == batsim.RegistrationFinished {
			t.Fatal("registration_finished sent while the resubmitted job was not acknowledged yet")
		}
	}
	r = h.send(2, batsim.JobSubmitted{JobID: reg.JobID, Job: reg.Job})
	var exec *batsim.ExecuteJob
	for _, ev := range r.Events {
		if e, ok := ev.Data.(batsim.ExecuteJob); ok {
			exec = &e
		}
	}
	if exec == nil || exec.JobID != "w!1-r1" {
		t.Fatalf("after JOB_SUBMITTED of the resubmitted job: %+v, want EXECUTE_JOB w!1-r1", r.Events)
	}
	// Preempted again: the second resubmission names the first job.
	h.preempt("w-1-r1")
	if _, registered = decisionsOf(h.send(3, batsim.RequestedCall{})); len(registered) != 1 || registered[0].JobID != "w!1-r2" {
		t.Fatalf("second preemption: registered %+v, want w!1-r2", registered)
	}
}

func TestResubmittingNeedsDynamicJobs(t *testing.T) {
	h := start(t, broker.Options{Quiet: 50 * time.Millisecond, Preempted: broker.PreemptedResubmit})
	m := batsim.Message{Now: 0, Events: []batsim.Event{{Data: begins("node0")}}}
	// The broker fails without answering: the request ends with the run.
	ctx, cancel := context.WithCancel(h.ctx)
	go func() { _, _ = h.client.Request(ctx, m) }()
	defer cancel()
	err := <-h.done
	if err == nil || !strings.Contains(err.Error(), "dynamic jobs") {
		t.Fatalf("Run: %v, want an error saying resubmission needs dynamic jobs", err)
	}
}
