package translate

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestDeadlineAndWalltime: a walltime becomes a deadline rounded up to a
// whole second, and the deadline is the walltime of a pod's job; no
// walltime, no deadline.
func TestDeadlineAndWalltime(t *testing.T) {
	for _, tc := range []struct {
		walltime float64
		deadline int64 // 0: none
	}{{100, 100}, {2.5, 3}, {0.001, 1}, {0, 0}, {-1, 0}} {
		d := Deadline(tc.walltime)
		switch {
		case tc.deadline == 0 && d != nil:
			t.Errorf("Deadline(%g) = %d, want none", tc.walltime, *d)
		case tc.deadline != 0 && (d == nil || *d != tc.deadline):
			t.Errorf("Deadline(%g) = %v, want %d", tc.walltime, d, tc.deadline)
		}
		w, ok := Walltime(&corev1.PodSpec{ActiveDeadlineSeconds: d})
		if ok != (tc.deadline != 0) || (ok && w != float64(tc.deadline)) {
			t.Errorf("Walltime of deadline %v = %g, %v", d, w, ok)
		}
	}
	pods, err := Pods(Job{ID: "w!1", Res: 1, Walltime: 7.2}, PodOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := Walltime(&pods[0].Spec); !ok || w != 8 {
		t.Errorf("a job of walltime 7.2 has pods of walltime %g, %v; want 8", w, ok)
	}
}
