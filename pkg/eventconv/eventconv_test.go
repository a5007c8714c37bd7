package eventconv

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// An Event converted to events.k8s.io/v1 and back is the Event it was, and
// neither conversion shares memory with its input.
func TestRoundTrip(t *testing.T) {
	at := metav1.Unix(1000, 0)
	in := &corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: "e", Namespace: "default", Labels: map[string]string{"a": "b"}},
		InvolvedObject:      corev1.ObjectReference{Kind: "Pod", Name: "p", UID: types.UID("u")},
		Reason:              "Scheduled",
		Message:             "bound",
		Source:              corev1.EventSource{Component: "kube-scheduler"},
		FirstTimestamp:      at,
		LastTimestamp:       at,
		Count:               3,
		Type:                corev1.EventTypeNormal,
		EventTime:           metav1.NewMicroTime(at.Time),
		Series:              &corev1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(at.Time)},
		Action:              "Binding",
		Related:             &corev1.ObjectReference{Kind: "Node", Name: "n"},
		ReportingController: "default-scheduler",
		ReportingInstance:   "i",
	}
	v1 := ToEventsV1(in)
	if v1.Note != in.Message || v1.Regarding != in.InvolvedObject || v1.DeprecatedCount != in.Count || v1.Series.Count != 2 {
		t.Fatalf("events.k8s.io/v1 fields: %+v", v1)
	}
	out := ToCore(v1)
	in.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Event"))
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip:\n got %+v\nwant %+v", out, in)
	}
	out.Labels["a"] = "changed"
	out.Related.Name = "changed"
	out.Series.Count = 9
	if in.Labels["a"] != "b" || in.Related.Name != "n" || in.Series.Count != 2 || v1.Series.Count != 2 {
		t.Errorf("a conversion shares memory with its input")
	}
}
