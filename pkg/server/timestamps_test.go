package server_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/batkube/batkube/pkg/server"
	"github.com/batkube/batkube/pkg/server/servertest"
)

// TestTimestampsInWholeSeconds: objects created at an instant that is not a
// whole second (a simulated 2.7 s, or any wall-clock instant) hold their
// creation and deletion timestamps to the second, as kube-apiserver's do
// (metav1.Time is stored and served to the second): an object a client
// read and sends back unchanged is accepted. Before, the stored
// creationTimestamp kept its fraction, and validation refused the update
// of a CustomResourceDefinition read back ("metadata.creationTimestamp:
// field is immutable"): Kueue's certificate manager, which writes the CA
// into its CRDs, never became ready against a plain server.
func TestTimestampsInWholeSeconds(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 2, 700_000_000, time.UTC)
	ts := servertest.Start(t, server.Options{Clock: clocktesting.NewFakePassiveClock(t0)})
	ctx := ctxT(t)
	ext := apiextensionsclient.NewForConfigOrDie(ts.Config())
	created, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, widgetsDefinition(t), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	read, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, created.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	read.Annotations = map[string]string{"touched": "yes"}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, read, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating a definition as it was read: %v", err)
	}

	client := ts.Clientset()
	ns, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := ts.Store.Get(corev1.Resource("namespaces"), "", "team-a")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.Object().GetCreationTimestamp().Time, t0.Truncate(time.Second); !got.Equal(want) || !ns.CreationTimestamp.Time.Equal(want) {
		t.Errorf("creationTimestamp stored %v, served %v; want %v", got, ns.CreationTimestamp.Time, want)
	}
	// kube-apiserver labels a namespace with its name (namespace
	// selectors, e.g. a Kueue ClusterQueue's, match on it).
	if got := ns.Labels[corev1.LabelMetadataName]; got != "team-a" {
		t.Errorf("namespace labels %v, want %s=team-a", ns.Labels, corev1.LabelMetadataName)
	}
}
