package registry

import (
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/batkube/batkube/pkg/scheme"
)

func TestPodDefaults(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "c", Image: "nginx",
		Ports:     []corev1.ContainerPort{{ContainerPort: 80}},
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
	}}}}
	ApplyDefaults(pod)
	c := pod.Spec.Containers[0]
	checks := []struct {
		what      string
		got, want any
	}{
		{"schedulerName", pod.Spec.SchedulerName, "default-scheduler"},
		{"restartPolicy", pod.Spec.RestartPolicy, corev1.RestartPolicyAlways},
		{"dnsPolicy", pod.Spec.DNSPolicy, corev1.DNSClusterFirst},
		{"terminationGracePeriodSeconds", *pod.Spec.TerminationGracePeriodSeconds, int64(30)},
		{"imagePullPolicy of an untagged image", c.ImagePullPolicy, corev1.PullAlways},
		{"port protocol", c.Ports[0].Protocol, corev1.ProtocolTCP},
		{"memory request from the limit", c.Resources.Requests.Memory().String(), "1Gi"},
		{"terminationMessagePath", c.TerminationMessagePath, "/dev/termination-log"},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s: got %v, want %v", ck.what, ck.got, ck.want)
		}
	}
}

func TestTagIsLatest(t *testing.T) {
	for image, want := range map[string]bool{
		"nginx": true, "nginx:latest": true, "nginx:1.27": false, "registry:5000/nginx": true,
		"registry:5000/nginx:1.2": false, "nginx@sha256:abc": false,
	} {
		if got := tagIsLatest(image); got != want {
			t.Errorf("tagIsLatest(%q) = %v, want %v", image, got, want)
		}
	}
}

func TestPodQOSClass(t *testing.T) {
	cpu := resource.MustParse("1")
	tests := []struct {
		name string
		res  corev1.ResourceRequirements
		want corev1.PodQOSClass
	}{
		{"nothing", corev1.ResourceRequirements{}, corev1.PodQOSBestEffort},
		{"requests only", corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: cpu}}, corev1.PodQOSBurstable},
		{"limits equal requests", corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: resource.MustParse("1Gi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: resource.MustParse("1Gi")}}, corev1.PodQOSGuaranteed},
	}
	for _, tt := range tests {
		spec := &corev1.PodSpec{Containers: []corev1.Container{{Resources: tt.res}}}
		if got := PodQOSClass(spec); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestValidate(t *testing.T) {
	good := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}
	tests := []struct {
		name string
		obj  runtime.Object
		want string // substring of the first error, "" for valid
	}{
		{"valid pod", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1"}, Spec: good}, ""},
		{"uppercase pod name", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "Web"}, Spec: good}, "metadata.name"},
		{"no name", &corev1.Pod{Spec: good}, "metadata.name"},
		{"no containers", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, "spec.containers"},
		{"duplicate containers", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}, {Name: "c", Image: "i"}}}}, "spec.containers[1].name"},
		{"namespace with a dot", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a.b"}}, "metadata.name"},
		{"node with a dot", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node.example.com"}}, ""},
		{"configmap with a slash", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a/b"}}, "metadata.name"},
	}
	for _, tt := range tests {
		errs := ValidateCreate(tt.obj)
		switch {
		case tt.want == "" && len(errs) > 0:
			t.Errorf("%s: got %v, want valid", tt.name, errs)
		case tt.want != "" && (len(errs) == 0 || !strings.Contains(errs[0].Error(), tt.want)):
			t.Errorf("%s: got %v, want an error on %s", tt.name, errs, tt.want)
		}
	}
}

func TestFieldSelectors(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: corev1.PodSpec{NodeName: "n1", SchedulerName: "s"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	tests := []struct {
		sel  string
		want bool
	}{
		{"status.phase!=Succeeded,status.phase!=Failed", true},
		{"spec.nodeName=n1", true},
		{"spec.nodeName==", false},
		{"spec.schedulerName=s,metadata.namespace=ns", true},
		{"metadata.name!=p", false},
	}
	set := FieldSet(pod)
	for _, tt := range tests {
		sel, err := fields.ParseSelector(tt.sel)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckFieldSelector("Pod", sel); err != nil {
			t.Errorf("%s: %v", tt.sel, err)
		}
		if got := sel.Matches(set); got != tt.want {
			t.Errorf("%s matches: got %v, want %v", tt.sel, got, tt.want)
		}
	}
	if err := CheckFieldSelector("Node", fields.OneTermEqualSelector("spec.nodeName", "x")); err == nil {
		t.Error("spec.nodeName on nodes: got no error, want an unsupported field error")
	}
}

func TestStatusSplit(t *testing.T) {
	stored := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Labels: map[string]string{"a": "1"}},
		Spec: appsv1.DeploymentSpec{Paused: true}, Status: appsv1.DeploymentStatus{Replicas: 3}}
	sent := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Labels: map[string]string{"a": "2"}},
		Spec: appsv1.DeploymentSpec{Paused: false}, Status: appsv1.DeploymentStatus{Replicas: 7, ReadyReplicas: 1}}

	main, err := WithStatus(sent.DeepCopy(), stored)
	if err != nil {
		t.Fatal(err)
	}
	if d := main.(*appsv1.Deployment); d.Status.Replicas != 3 || d.Status.ReadyReplicas != 0 || d.Spec.Paused {
		t.Errorf("main update: got spec.paused %v status %+v, want the new spec and the stored status", d.Spec.Paused, d.Status)
	}
	st, err := StatusUpdate(stored, sent)
	if err != nil {
		t.Fatal(err)
	}
	if d := st.(*appsv1.Deployment); d.Status.Replicas != 7 || !d.Spec.Paused || d.Labels["a"] != "1" {
		t.Errorf("status update: got paused %v labels %v status %+v, want the stored spec and labels and the new status", d.Spec.Paused, d.Labels, d.Status)
	}
}

// TestStatusSplitOfATypedKindCopies: for a kind with no rule of its own
// (a Job), the status taken from the source is a copy: changing the source
// afterwards leaves the result as it was, and the result's spec is its own.
func TestStatusSplitOfATypedKindCopies(t *testing.T) {
	active := int32(2)
	stored := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j"}, Spec: batchv1.JobSpec{Parallelism: &active},
		Status: batchv1.JobStatus{Active: 1, Conditions: []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue}}}}
	sent := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j"}, Status: batchv1.JobStatus{Active: 5}}
	got, err := WithStatus(sent, stored)
	if err != nil {
		t.Fatal(err)
	}
	j := got.(*batchv1.Job)
	stored.Status.Conditions[0].Status = corev1.ConditionFalse
	stored.Status.Active = 9
	if j.Status.Active != 1 || len(j.Status.Conditions) != 1 || j.Status.Conditions[0].Status != corev1.ConditionTrue {
		t.Errorf("status %+v, want a copy of the stored status as it was (active 1, suspended)", j.Status)
	}
	if j.Spec.Parallelism != nil {
		t.Errorf("spec took the stored parallelism %v, want the sent spec's (none)", *j.Spec.Parallelism)
	}
	// A kind without a Status field, or a source of another kind, is an
	// error rather than a status silently dropped.
	if _, err := WithStatus(&corev1.ConfigMap{}, &corev1.ConfigMap{}); err == nil {
		t.Error("WithStatus on a ConfigMap (no Status field): no error")
	}
	if _, err := WithStatus(sent, &appsv1.Deployment{}); err == nil {
		t.Error("WithStatus of a Job from a Deployment: no error")
	}
}

// TestPodForStatusChangeCopiesWhatItsChangesWrite: the copy's metadata,
// status and node are its own (the original is left as it was); the rest of
// the spec is shared, which is the point.
func TestPodForStatusChangeCopiesWhatItsChangesWrite(t *testing.T) {
	orig := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "1"}, Annotations: map[string]string{"b": "2"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}, Tolerations: []corev1.Toleration{{Key: "k"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse}}},
	}
	before := orig.DeepCopy()
	cp := PodForStatusChange(orig).(*corev1.Pod)
	cp.Labels["a"] = "changed"
	cp.Annotations["new"] = "x"
	cp.ResourceVersion = "9"
	cp.Spec.NodeName = "n1"
	cp.Status.Phase = corev1.PodRunning
	cp.Status.Conditions[0].Status = corev1.ConditionTrue
	cp.Status.ContainerStatuses = append(cp.Status.ContainerStatuses, corev1.ContainerStatus{Name: "c"})
	if !apiequality.Semantic.DeepEqual(orig, before) {
		t.Errorf("changing the copy changed the original:\n%+v\nwant\n%+v", orig, before)
	}
	if &cp.Spec.Containers[0] != &orig.Spec.Containers[0] || &cp.Spec.Tolerations[0] != &orig.Spec.Tolerations[0] {
		t.Errorf("the copy does not share the containers and tolerations")
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "1"}}}
	nc := PodForStatusChange(node).(*corev1.Node)
	nc.Labels["a"] = "2"
	if node.Labels["a"] != "1" {
		t.Errorf("another kind is not copied deeply")
	}
}

// TestPodForMetadataChangeCopiesTheMetadata: the copy's metadata is its own;
// spec and status are shared.
func TestPodForMetadataChangeCopiesTheMetadata(t *testing.T) {
	orig := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "1"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}},
		Status:     corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled}}},
	}
	before := orig.DeepCopy()
	cp := PodForMetadataChange(orig).(*corev1.Pod)
	cp.Labels["a"] = "changed"
	cp.ResourceVersion = "9"
	now := metav1.Now()
	cp.DeletionTimestamp = &now
	if !apiequality.Semantic.DeepEqual(orig, before) {
		t.Errorf("changing the copy's metadata changed the original:\n%+v\nwant\n%+v", orig, before)
	}
	if &cp.Spec.Containers[0] != &orig.Spec.Containers[0] || &cp.Status.Conditions[0] != &orig.Status.Conditions[0] {
		t.Errorf("the copy does not share the spec and the status")
	}
}

// BenchmarkWithStatusJob: a Job's update keeping its stored status.
func BenchmarkWithStatusJob(b *testing.B) {
	stored := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Labels: map[string]string{"a": "b"}},
		Spec:   batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}},
		Status: batchv1.JobStatus{Active: 1, Conditions: []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue}}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := WithStatus(stored.DeepCopy(), stored); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEveryServedKindKeepsItsStatusInStatus: WithStatus takes a kind's
// status from its Go field named Status. Every kind of the server's scheme
// whose JSON has a "status" holds it in that field, so no status
// subresource of a built-in kind reaches WithStatus's error.
func TestEveryServedKindKeepsItsStatusInStatus(t *testing.T) {
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for gvk, typ := range s.AllKnownTypes() {
		if typ.Kind() != reflect.Struct {
			continue
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == "status" {
				checked++
				if f.Name != "Status" {
					t.Errorf("%s: its status is in field %s, not Status", gvk, f.Name)
				}
				obj, err := s.New(gvk)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := WithStatus(obj, obj.DeepCopyObject()); err != nil {
					t.Errorf("%s: %v", gvk, err)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("%d kinds with a status checked, want the scheme's many", checked)
	}
}

// plainStatus has no generated deep copy: WithStatus copies the source
// whole to take it.
type plainStatus struct{ Phase string }

type plainKind struct {
	metav1.TypeMeta
	Spec   string
	Status plainStatus
}

func (p *plainKind) DeepCopyObject() runtime.Object { c := *p; return &c }

// A status type without DeepCopyInto is still copied, from a copy of the
// source: the spec stays the object's own.
func TestStatusOfATypeWithoutDeepCopyInto(t *testing.T) {
	got, err := WithStatus(&plainKind{Spec: "mine", Status: plainStatus{"old"}}, &plainKind{Spec: "theirs", Status: plainStatus{"new"}})
	if err != nil {
		t.Fatal(err)
	}
	if p := got.(*plainKind); p.Spec != "mine" || p.Status.Phase != "new" {
		t.Errorf("got spec %q status %q, want mine and new", p.Spec, p.Status.Phase)
	}
}
