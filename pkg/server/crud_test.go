package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/batkube/batkube/pkg/server/servertest"
)

// clients returns a JSON and a protobuf clientset of ts.
func clients(t *testing.T, ts *servertest.Server) map[string]kubernetes.Interface {
	t.Helper()
	return clientsWithToken(t, ts, "")
}

// eachClient runs test as a subtest per encoding (JSON, protobuf), each with
// its clientset and a context that ends with the subtest.
func eachClient(t *testing.T, ts *servertest.Server, test func(t *testing.T, ctx context.Context, name string, cs kubernetes.Interface)) {
	t.Helper()
	for name, cs := range clients(t, ts) {
		t.Run(name, func(t *testing.T) { test(t, ctxT(t), name, cs) })
	}
}

func newPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "test"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Image: "busybox:1.36",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}},
		}}},
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestPodLifecycleThroughClientGo(t *testing.T) {
	ts := servertest.StartDefault(t)
	eachClient(t, ts, func(t *testing.T, ctx context.Context, name string, cs kubernetes.Interface) {
		pods := cs.CoreV1().Pods("default")
		p := newPod("")
		p.GenerateName = "web-"
		created, err := pods.Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if len(created.Name) != len("web-")+5 || created.UID == "" || created.ResourceVersion == "" || created.CreationTimestamp.IsZero() {
			t.Fatalf("create did not set name/uid/resourceVersion/creationTimestamp: %+v", created.ObjectMeta)
		}
		if created.Status.Phase != corev1.PodPending || created.Spec.SchedulerName != corev1.DefaultSchedulerName {
			t.Errorf("got phase %q scheduler %q, want Pending and %q", created.Status.Phase, created.Spec.SchedulerName, corev1.DefaultSchedulerName)
		}
		if got := created.Spec.Containers[0].Resources.Requests.Cpu().String(); got != "500m" {
			t.Errorf("cpu request defaulted from the limit: got %s, want 500m", got)
		}

		got, err := pods.Get(ctx, created.Name, metav1.GetOptions{})
		if err != nil || got.ResourceVersion != created.ResourceVersion {
			t.Fatalf("get: %v, rv %s want %s", err, got.ResourceVersion, created.ResourceVersion)
		}

		got.Labels["tier"] = "front"
		got.Status.Phase = corev1.PodRunning // ignored by a main-resource update
		updated, err := pods.Update(ctx, got, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		if updated.Labels["tier"] != "front" || updated.Status.Phase != corev1.PodPending {
			t.Errorf("update: got labels %v phase %s, want tier=front and phase Pending", updated.Labels, updated.Status.Phase)
		}
		if _, err := pods.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			t.Errorf("update with a stale resourceVersion: got %v, want 409 Conflict", err)
		}

		for _, p := range []struct {
			typ   types.PatchType
			patch string
			label string
		}{
			{types.StrategicMergePatchType, `{"metadata":{"labels":{"p":"smp"}}}`, "smp"},
			{types.MergePatchType, `{"metadata":{"labels":{"p":"merge"}}}`, "merge"},
			{types.JSONPatchType, `[{"op":"replace","path":"/metadata/labels/p","value":"json"}]`, "json"},
		} {
			patched, err := pods.Patch(ctx, created.Name, p.typ, []byte(p.patch), metav1.PatchOptions{})
			if err != nil {
				t.Fatalf("patch %s: %v", p.typ, err)
			}
			if patched.Labels["p"] != p.label || patched.Labels["tier"] != "front" {
				t.Errorf("patch %s: got labels %v, want p=%s and tier kept", p.typ, patched.Labels, p.label)
			}
		}

		st := updated.DeepCopy()
		st.ResourceVersion = ""
		st.Status.Phase = corev1.PodRunning
		st.Labels = map[string]string{"ignored": "by status updates"}
		afterStatus, err := pods.UpdateStatus(ctx, st, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update status: %v", err)
		}
		if afterStatus.Status.Phase != corev1.PodRunning || afterStatus.Labels["ignored"] != "" || afterStatus.Labels["p"] != "json" {
			t.Errorf("status update: got phase %s labels %v, want Running and labels unchanged", afterStatus.Status.Phase, afterStatus.Labels)
		}

		binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: created.Name}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}
		if err := pods.Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatalf("bind: %v", err)
		}
		bound, _ := pods.Get(ctx, created.Name, metav1.GetOptions{})
		if bound.Spec.NodeName != "node-1" || !hasCondition(bound, corev1.PodScheduled, corev1.ConditionTrue) {
			t.Errorf("bind: got node %q conditions %v, want node-1 and PodScheduled=True", bound.Spec.NodeName, bound.Status.Conditions)
		}
		binding.Target.Name = "node-2"
		err = pods.Bind(ctx, binding, metav1.CreateOptions{})
		if !apierrors.IsConflict(err) {
			t.Fatalf("second bind: got %v, want 409 Conflict", err)
		}
		if want := fmt.Sprintf("pod %s is already assigned to node \"node-1\"", created.Name); !strings.Contains(err.Error(), want) {
			t.Errorf("second bind message: got %q, want it to contain %q", err.Error(), want)
		}
		if err := pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "missing"}, Target: corev1.ObjectReference{Name: "n"}}, metav1.CreateOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("bind of a missing pod: got %v, want 404", err)
		}

		if err := pods.Delete(ctx, created.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		if _, err := pods.Get(ctx, created.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get after delete: got %v, want 404", err)
		}
	})
}

func hasCondition(p *corev1.Pod, typ corev1.PodConditionType, status corev1.ConditionStatus) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == typ && c.Status == status {
			return true
		}
	}
	return false
}

func TestNodesNamespacesLeasesEvents(t *testing.T) {
	ts := servertest.StartDefault(t)
	eachClient(t, ts, func(t *testing.T, ctx context.Context, name string, cs kubernetes.Interface) {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-" + name},
			Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("110")}}}
		n, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create node: %v", err)
		}
		if n.Status.Allocatable.Cpu().String() != "4" {
			t.Errorf("node allocatable defaults to capacity: got %v", n.Status.Allocatable)
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		if n, err = cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil || len(n.Status.Conditions) != 1 {
			t.Fatalf("node status update: %v %v", err, n.Status.Conditions)
		}
		if err := cs.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete node: %v", err)
		}

		nsList, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list namespaces: %v", err)
		}
		have := map[string]bool{}
		for _, ns := range nsList.Items {
			have[ns.Name] = ns.Status.Phase == corev1.NamespaceActive
		}
		for _, want := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
			if !have[want] {
				t.Errorf("namespace %s missing or not Active (have %v)", want, have)
			}
		}
		if err := cs.CoreV1().Namespaces().Delete(ctx, "default", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("deleting default: got %v, want 403", err)
		}
		if _, err := cs.CoreV1().Pods("nowhere").Create(ctx, newPod("p"), metav1.CreateOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("pod in a missing namespace: got %v, want 404", err)
		}
		nsName := "team-" + name
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsName}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create namespace: %v", err)
		}
		if _, err := cs.CoreV1().Pods(nsName).Create(ctx, newPod("p"), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod in new namespace: %v", err)
		}
		if err := cs.CoreV1().Namespaces().Delete(ctx, nsName, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete namespace: %v", err)
		}
		if _, err := cs.CoreV1().Pods(nsName).Get(ctx, "p", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("pod of a deleted namespace: got %v, want 404", err)
		}

		leases := cs.CoordinationV1().Leases("kube-system")
		holder := "me"
		lease, err := leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "lock-" + name}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create lease: %v", err)
		}
		other := "you"
		lease.Spec.HolderIdentity = &other
		if lease, err = leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil || *lease.Spec.HolderIdentity != "you" {
			t.Fatalf("update lease: %v", err)
		}

		ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "ev-" + name, Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p-" + name, Namespace: "default"},
			Reason:         "Scheduled", Message: "assigned", Type: corev1.EventTypeNormal}
		if _, err := cs.CoreV1().Events("default").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create event: %v", err)
		}
		byField, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=p-" + name})
		if err != nil || len(byField.Items) != 1 {
			t.Fatalf("events by involvedObject.name: %v, %d items, want 1", err, len(byField.Items))
		}
		newAPI, err := cs.EventsV1().Events("default").Get(ctx, "ev-"+name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the core event through events.k8s.io/v1: %v", err)
		}
		if newAPI.Note != "assigned" || newAPI.Regarding.Name != "p-"+name {
			t.Errorf("events.k8s.io/v1 view: got note %q regarding %q", newAPI.Note, newAPI.Regarding.Name)
		}
		v1ev := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "new-" + name}, EventTime: metav1.NowMicro(),
			ReportingController: "test", ReportingInstance: "test-1", Action: "Binding", Reason: "Scheduled",
			Regarding: corev1.ObjectReference{Kind: "Pod", Name: "q-" + name, Namespace: "default"}, Note: "bound", Type: "Normal"}
		if _, err := cs.EventsV1().Events("default").Create(ctx, v1ev, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create events.k8s.io/v1 event: %v", err)
		}
		core, err := cs.CoreV1().Events("default").Get(ctx, "new-"+name, metav1.GetOptions{})
		if err != nil || core.Message != "bound" || core.InvolvedObject.Name != "q-"+name {
			t.Fatalf("events.k8s.io event through core v1: %v %+v", err, core)
		}
	})
}
