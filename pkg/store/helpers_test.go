package store

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	pods   = schema.GroupResource{Resource: "pods"}
	nodes  = schema.GroupResource{Resource: "nodes"}
	events = schema.GroupResource{Group: "events.k8s.io", Resource: "events"}
)

// eventDeadline bounds how long a test waits for an event that must come.
const eventDeadline = 10 * time.Second

func newPod(ns, name string, labels map[string]string, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       corev1.PodSpec{NodeName: node},
	}
}

// podFields is a FieldsFunc like the API layer's for pods.
func podFields(_ schema.GroupResource, obj runtime.Object, add func(name, value string)) {
	if pod, ok := obj.(*corev1.Pod); ok {
		add("spec.nodeName", pod.Spec.NodeName)
		add("status.phase", string(pod.Status.Phase))
	}
}

func newTestStore(t testing.TB, history int) *Store {
	t.Helper()
	return New(Options{HistorySize: history, Fields: podFields})
}

func mustCreate(t testing.TB, s *Store, gr schema.GroupResource, obj Object) *Stored {
	t.Helper()
	st, err := s.Create(context.Background(), gr, obj)
	if err != nil {
		t.Fatalf("Create %s/%s: %v", obj.GetNamespace(), obj.GetName(), err)
	}
	return st
}

// createPods creates a pod of each name in namespace ns, without labels.
func createPods(t testing.TB, s *Store, names ...string) {
	t.Helper()
	for _, name := range names {
		mustCreate(t, s, pods, newPod("ns", name, nil, ""))
	}
}

func mustList(t testing.TB, s *Store, gr schema.GroupResource, opts ListOptions) ListResult {
	t.Helper()
	res, err := s.List(gr, opts)
	if err != nil {
		t.Fatalf("List %s: %v", gr, err)
	}
	return res
}

func mustUpdate(t testing.TB, s *Store, gr schema.GroupResource, ns, name string, change func(*corev1.Pod)) *Stored {
	t.Helper()
	st, err := s.Update(context.Background(), gr, ns, name, func(cur Object) (Object, error) {
		change(cur.(*corev1.Pod))
		return cur, nil
	})
	if err != nil {
		t.Fatalf("Update %s/%s: %v", ns, name, err)
	}
	return st
}

func mustDelete(t testing.TB, s *Store, gr schema.GroupResource, ns, name string) *Stored {
	t.Helper()
	st, err := s.Delete(context.Background(), gr, ns, name, nil)
	if err != nil {
		t.Fatalf("Delete %s/%s: %v", ns, name, err)
	}
	return st
}

func mustWatch(t testing.TB, s *Store, gr schema.GroupResource, opts WatchOptions) *Watcher {
	t.Helper()
	w, err := s.Watch(context.Background(), gr, opts)
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	t.Cleanup(w.Stop)
	return w
}

// nextEvent returns the watcher's next event, failing the test if none comes
// before the deadline or the stream ends.
func nextEvent(t testing.TB, w *Watcher) Event {
	t.Helper()
	timer := time.NewTimer(eventDeadline)
	defer timer.Stop()
	select {
	case ev, ok := <-w.Events():
		if !ok {
			t.Fatalf("watch ended early: %v", w.Err())
		}
		return ev
	case <-timer.C:
		t.Fatalf("no event within %v", eventDeadline)
	}
	return Event{}
}

// receive returns the watcher's next event, or false once its stream is
// closed, failing the test if neither comes before the deadline.
func receive(t testing.TB, w *Watcher) (Event, bool) {
	t.Helper()
	timer := time.NewTimer(eventDeadline)
	defer timer.Stop()
	select {
	case ev, ok := <-w.Events():
		return ev, ok
	case <-timer.C:
		t.Fatalf("no event within %v", eventDeadline)
	}
	return Event{}, false
}

// writeEvents creates n objects of another resource than pods, "events", as
// a scheduler's stream of Events would.
func writeEvents(t testing.TB, s *Store, n int) {
	t.Helper()
	for i := range n {
		mustCreate(t, s, events, newPod("ns", "e"+strconv.Itoa(i), nil, ""))
	}
}

// ringLen is the length of gr's history ring (0 without a history).
func ringLen(s *Store, gr schema.GroupResource) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if h := s.histories[gr]; h != nil {
		return len(h.ring)
	}
	return 0
}

// nextEvents returns the next n events.
func nextEvents(t testing.TB, w *Watcher, n int) []Event {
	t.Helper()
	evs := make([]Event, 0, n)
	for range n {
		evs = append(evs, nextEvent(t, w))
	}
	return evs
}

// endOf drains the watcher until its stream closes and returns what came.
func endOf(t testing.TB, w *Watcher) []Event {
	t.Helper()
	timer := time.NewTimer(eventDeadline)
	defer timer.Stop()
	var evs []Event
	for {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				return evs
			}
			evs = append(evs, ev)
		case <-timer.C:
			t.Fatalf("watch did not end within %v (%d events)", eventDeadline, len(evs))
		}
	}
}

func names(evs []Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		if ev.Object != nil {
			out[i] = string(ev.Type) + " " + ev.Object.Object().GetName()
		} else {
			out[i] = string(ev.Type)
		}
	}
	return out
}

func itemNames(items []*Stored) []string {
	out := make([]string, len(items))
	for i, st := range items {
		out[i] = st.Object().GetNamespace() + "/" + st.Object().GetName()
	}
	return out
}

// selection is the Selection of a label and a field selector, parsed as a
// client's query is; "" leaves a selector nil (no filter).
func selection(t testing.TB, label, field string) Selection {
	t.Helper()
	var sel Selection
	var err error
	if label != "" {
		if sel.Label, err = labels.Parse(label); err != nil {
			t.Fatalf("parsing label selector %q: %v", label, err)
		}
	}
	if field != "" {
		if sel.Field, err = fields.ParseSelector(field); err != nil {
			t.Fatalf("parsing field selector %q: %v", field, err)
		}
	}
	return sel
}

func ptr[T any](v T) *T { return &v }

func strconvU(v uint64) string { return strconv.FormatUint(v, 10) }

func encodeRaw(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func asStatus(err error, target **apierrors.StatusError) bool { return errors.As(err, target) }
