package server_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/batkube/batkube/pkg/apiserver"
	"github.com/batkube/batkube/pkg/server"
	"github.com/batkube/batkube/pkg/server/servertest"
)

// TestEventsExpireAnHourAfterTheirLastWrite: as on kube-apiserver (its
// --event-ttl), an event is removed once it has not been written for an
// hour of the server's clock (simulated time in a simulation), and
// watchers of events see it go; a write in between keeps it.
func TestEventsExpireAnHourAfterTheirLastWrite(t *testing.T) {
	ctx := ctxT(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := clocktesting.NewFakePassiveClock(t0)
	ts := servertest.Start(t, server.Options{Clock: clock})
	cs := ts.ProtobufClientset()
	events := cs.CoreV1().Events("default")
	create := func(name string) {
		t.Helper()
		if _, err := events.Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p"}, Reason: "Scheduled", Type: "Normal"}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(name string) bool {
		t.Helper()
		_, err := events.Get(ctx, name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	w, err := events.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	create("a")
	clock.SetTime(t0.Add(30 * time.Minute))
	if _, err := events.Patch(ctx, "a", types.MergePatchType, []byte(`{"count":2}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	create("b")
	clock.SetTime(t0.Add(61 * time.Minute))
	create("c") // a's first write is an hour old, but a was written since
	for name, want := range map[string]bool{"a": true, "b": true, "c": true} {
		if got := exists(name); got != want {
			t.Errorf("at t0+61m: event %s exists: %t, want %t", name, got, want)
		}
	}
	clock.SetTime(t0.Add(apiserver.DefaultEventTTL + 31*time.Minute))
	create("d")
	for name, want := range map[string]bool{"a": false, "b": false, "c": true, "d": true} {
		if got := exists(name); got != want {
			t.Errorf("at t0+91m: event %s exists: %t, want %t", name, got, want)
		}
	}
	var deleted []string
	for len(deleted) < 2 {
		select {
		case ev := <-w.ResultChan():
			if ev.Type == watch.Deleted {
				deleted = append(deleted, ev.Object.(*corev1.Event).Name)
			}
		case <-ctx.Done():
			t.Fatalf("the watch of events saw %v deleted, want a and b", deleted)
		}
	}
	if deleted[0] != "a" || deleted[1] != "b" {
		t.Errorf("the watch saw %v deleted, want [a b]", deleted)
	}

	// A patch is timed when it is made, not when the next event is created.
	clock.SetTime(t0.Add(100 * time.Minute))
	if _, err := events.Patch(ctx, "c", types.MergePatchType, []byte(`{"count":2}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	clock.SetTime(t0.Add(150 * time.Minute))
	create("e")
	clock.SetTime(t0.Add(165 * time.Minute))
	create("f")
	for name, want := range map[string]bool{"c": false, "d": false, "e": true, "f": true} {
		if got := exists(name); got != want {
			t.Errorf("at t0+165m (c patched at t0+100m): event %s exists: %t, want %t", name, got, want)
		}
	}
}

// TestEventsOfOneInstantAllStored: client-go's recorders name an event
// after its object and the recording instant in nanoseconds (NAME.HEX);
// on simulated time every event of an instant has the same name, and a
// refused one is dropped. The server stores a different event under the
// next free nanosecond and answers with that name, through either API;
// a repeat of the stored event, or a name of another form, is refused as
// kube-apiserver refuses it.
func TestEventsOfOneInstantAllStored(t *testing.T) {
	ctx := ctxT(t)
	ts := servertest.Start(t, server.Options{})
	cs := ts.ProtobufClientset()
	core := cs.CoreV1().Events("default")
	pod := corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p", UID: "u1"}
	const name = "p.18a0b0c0d0e0f00"
	create := func(name, reason string) (string, error) {
		t.Helper()
		ev, err := core.Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name},
			InvolvedObject: pod, Reason: reason, Message: reason + " p", Type: "Normal"}, metav1.CreateOptions{})
		if err != nil {
			return "", err
		}
		return ev.Name, nil
	}
	for _, tc := range []struct{ reason, want string }{
		{"Scheduled", name},
		{"Pulled", "p.18a0b0c0d0e0f01"},
		{"Started", "p.18a0b0c0d0e0f02"},
	} {
		got, err := create(name, tc.reason)
		if err != nil || got != tc.want {
			t.Fatalf("event %s named %s: stored as %q, %v; want %s", tc.reason, name, got, err, tc.want)
		}
	}
	ev, err := cs.EventsV1().Events("default").Create(ctx, &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: name},
		EventTime: metav1.NowMicro(), Regarding: pod, Reason: "Killing", Note: "Killing p", Type: "Normal",
		Action: "Kill", ReportingController: "kubelet", ReportingInstance: "n1"}, metav1.CreateOptions{})
	if err != nil || ev.Name != "p.18a0b0c0d0e0f03" {
		t.Fatalf("events.k8s.io event named %s: %v, %v; want p.18a0b0c0d0e0f03", name, ev, err)
	}
	if got, err := create(name, "Scheduled"); !apierrors.IsAlreadyExists(err) {
		t.Errorf("a repeat of the stored event: stored as %q, %v; want AlreadyExists", got, err)
	}
	if _, err := create("plain", "Scheduled"); err != nil {
		t.Fatal(err)
	}
	if got, err := create("plain", "Pulled"); !apierrors.IsAlreadyExists(err) {
		t.Errorf("a name not of the recorders' form: stored as %q, %v; want AlreadyExists", got, err)
	}
	list, err := core.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 5 {
		t.Fatalf("%d events stored (%v), want 5", len(list.Items), err)
	}
}
