package translate

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestNodeFromHost(t *testing.T) {
	h := Host{ID: 7, Name: "node7",
		Properties: map[string]string{"role": "", "core": "6", "memory": "4Gi", "nvidia.com/gpu": "2",
			"label:disktype": "ssd", "taint:dedicated": "gpu:NoSchedule", "speed-note": "fast"},
		ZoneProperties: map[string]string{"site": "nancy"}}
	n, err := Node(h, NodeOptions{DefaultCPU: resource.MustParse("1"), DefaultMemory: resource.MustParse("1Gi")})
	if err != nil {
		t.Fatal(err)
	}
	capacity := n.Status.Capacity
	for _, ck := range []struct {
		name corev1.ResourceName
		want string
	}{{"cpu", "6"}, {"memory", "4Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "2"}} {
		q := capacity[ck.name]
		if q.String() != ck.want {
			t.Errorf("capacity %s: got %s, want %s", ck.name, q.String(), ck.want)
		}
	}
	if n.Labels["disktype"] != "ssd" || n.Labels["batkube.io/zone-site"] != "nancy" || n.Labels[corev1.LabelHostname] != "node7" {
		t.Errorf("labels: got %v", n.Labels)
	}
	if len(n.Spec.Taints) != 1 || n.Spec.Taints[0] != (corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}) {
		t.Errorf("taints: got %v", n.Spec.Taints)
	}
	if id, err := ResourceID(n); err != nil || id != 7 {
		t.Errorf("ResourceID: got %d, %v; want 7", id, err)
	}
}

func TestNodeErrors(t *testing.T) {
	for name, h := range map[string]Host{
		"bad core":   {Name: "n", Properties: map[string]string{"core": "many"}},
		"bad taint":  {Name: "n", Properties: map[string]string{"taint:x": "NoSchedule"}},
		"bad effect": {Name: "n", Properties: map[string]string{"taint:x": "v:Sometimes"}},
	} {
		if _, err := Node(h, NodeOptions{}); err == nil {
			t.Errorf("%s: got no error", name)
		}
	}
	if !IsMaster(Host{Properties: map[string]string{"role": "master"}}) || IsMaster(Host{Properties: map[string]string{"role": ""}}) {
		t.Error("IsMaster misreads the role property")
	}
}

// TestNodeNamesFromBatsimHosts: Batsim's host names need not be node names
// (small_platform.xml's Bourassa, Jupiter...; underscores; dots): each gets
// a valid, unique one, keeps its own in an annotation (and a label when it
// is a valid label value), and its resource id; a name valid already is
// kept; several hosts that would share a name are told apart by their
// resource ids, but for the one whose own name it is.
func TestNodeNamesFromBatsimHosts(t *testing.T) {
	hosts := []Host{
		{ID: 0, Name: "Bourassa"},
		{ID: 1, Name: "node_1"},
		{ID: 2, Name: "node-1"}, // node_1's name, its own
		{ID: 3, Name: "Node-1"},
		{ID: 4, Name: "master_host", Properties: map[string]string{"role": "master"}},
		{ID: 5, Name: "cor_0_example_cpu_0_example_node_0_clu_0_and_a_very_long_name_indeed_beyond_63"},
		{ID: 6, Name: "a.-b"},
		{ID: 7, Name: "___"},
		{ID: 8, Name: "jupiter.cluster.fr"},
	}
	nodes, err := Nodes(hosts, NodeOptions{DefaultCPU: resource.MustParse("1"), DefaultMemory: resource.MustParse("1Gi")})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{0: "bourassa", 1: "node-1-1", 2: "node-1", 3: "node-1-3",
		5: "cor-0-example-cpu-0-example-node-0-clu-0-and-a-very-long-name-i", 6: "a--b", 7: "host", 8: "jupiter.cluster.fr"}
	if len(nodes) != len(want) {
		t.Fatalf("%d nodes, want %d (the master host is no node)", len(nodes), len(want))
	}
	seen := map[string]bool{}
	for _, n := range nodes {
		id, err := ResourceID(n)
		if err != nil {
			t.Fatal(err)
		}
		if n.Name != want[id] {
			t.Errorf("host %d (%q): node %q, want %q", id, hosts[id].Name, n.Name, want[id])
		}
		if errs := validation.IsDNS1123Subdomain(n.Name); len(errs) > 0 || seen[n.Name] {
			t.Errorf("node %q: invalid (%v) or not unique", n.Name, errs)
		}
		seen[n.Name] = true
		if n.Annotations[HostNameKey] != hosts[id].Name || n.Labels[corev1.LabelHostname] != n.Name {
			t.Errorf("node %q: annotations %v, labels %v: want the host's own name kept and the hostname label the node's", n.Name, n.Annotations, n.Labels)
		}
		if v, ok := n.Labels[HostNameKey]; ok != (len(validation.IsValidLabelValue(hosts[id].Name)) == 0) || ok && v != hosts[id].Name {
			t.Errorf("node %q: host-name label %q (%t)", n.Name, v, ok)
		}
		if q := n.Status.Allocatable[HostResource]; q.Value() != 1 {
			t.Errorf("node %q: %s %s, want 1", n.Name, HostResource, q.String())
		}
	}
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func TestPodsFromJob(t *testing.T) {
	job := Job{ID: "w0!12", Res: 1, Walltime: 99.5,
		Profile: map[string]json.RawMessage{"type": raw(`"delay"`), "delay": raw(`10`), "cpu": raw(`0.5`), "memory": raw(`"1Gi"`), "scheduler": raw(`"my-sched"`)}}
	pods, err := Pods(job, PodOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := pods[0]
	if p.Name != "w0-12" || p.Namespace != "default" || p.Annotations[JobIDKey] != "w0!12" || p.Spec.SchedulerName != "my-sched" {
		t.Errorf("got %s/%s annotations %v scheduler %s", p.Namespace, p.Name, p.Annotations, p.Spec.SchedulerName)
	}
	req := p.Spec.Containers[0].Resources.Requests
	if req.Cpu().String() != "500m" || req.Memory().String() != "1Gi" {
		t.Errorf("requests: got %v", req)
	}
	if p.Spec.ActiveDeadlineSeconds == nil || *p.Spec.ActiveDeadlineSeconds != 100 {
		t.Errorf("activeDeadlineSeconds: got %v, want 100", p.Spec.ActiveDeadlineSeconds)
	}
}

func TestPodTemplateAndGroups(t *testing.T) {
	job := Job{ID: "w1!7", Res: 3,
		Fields:  map[string]json.RawMessage{"pod_template": raw(`{"metadata":{"labels":{"team":"a"}},"spec":{"priorityClassName":"high","containers":[{"name":"main","image":"x","resources":{"requests":{"cpu":"2"}}}]}}`)},
		Profile: map[string]json.RawMessage{"type": raw(`"delay"`), "cpu": raw(`1`), "memory": raw(`"2Gi"`)}}
	pods, err := Pods(job, PodOptions{SchedulerName: "default-scheduler"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 3 {
		t.Fatalf("got %d pods, want 3", len(pods))
	}
	for i, p := range pods {
		req := p.Spec.Containers[0].Resources.Requests
		if p.Labels["team"] != "a" || p.Labels[JobLabel] != "w1-7" || p.Spec.PriorityClassName != "high" ||
			req.Cpu().String() != "2" || req.Memory().String() != "2Gi" || p.Annotations[GroupSizeKey] != "3" {
			t.Errorf("pod %d: %s labels %v priority %q requests %v annotations %v", i, p.Name, p.Labels, p.Spec.PriorityClassName, req, p.Annotations)
		}
	}
	bad := Job{ID: "w!1", Fields: map[string]json.RawMessage{"pod_template": raw(`[1]`)}}
	if _, err := Pods(bad, PodOptions{}); err == nil || !strings.Contains(err.Error(), "pod_template") {
		t.Errorf("a malformed pod_template: got %v", err)
	}
}

func TestPodNameIsValidAndDistinct(t *testing.T) {
	ids := []string{"w0!1", "w0!a_b", "w0!a-b", "W0!1", "w0!" + strings.Repeat("x", 300), "!", "w!ü"}
	seen := map[string]string{}
	for _, id := range ids {
		n := PodName(id)
		if errs := validation.IsDNS1123Subdomain(n + "-99"); len(errs) > 0 {
			t.Errorf("PodName(%q) = %q: %v", id, n, errs)
		}
		if other, dup := seen[n]; dup {
			t.Errorf("PodName(%q) = PodName(%q) = %q", id, other, n)
		}
		seen[n] = id
	}
}

func FuzzPodName(f *testing.F) {
	f.Add("w0!1")
	f.Add("a_b!C")
	f.Fuzz(func(t *testing.T, id string) {
		if errs := validation.IsDNS1123Subdomain(PodName(id) + "-99"); len(errs) > 0 {
			t.Fatalf("PodName(%q) = %q: %v", id, PodName(id), errs)
		}
	})
}

func TestComputingProfileCPUIsFlopsNotCores(t *testing.T) {
	job := Job{ID: "w!1", Profile: map[string]json.RawMessage{"type": raw(`"parallel_homogeneous"`), "cpu": raw(`1e10`), "com": raw(`0`), "memory": raw(`"1Gi"`)}}
	pods, err := Pods(job, PodOptions{})
	if err != nil {
		t.Fatal(err)
	}
	req := pods[0].Spec.Containers[0].Resources.Requests
	if _, hasCPU := req[corev1.ResourceCPU]; hasCPU || req.Memory().String() != "1Gi" {
		t.Errorf("got requests %v, want memory only", req)
	}
}

// A job's pod_template wins over its profile's, a null one too: the job's
// pod then has no template (cached profile or not).
func TestJobPodTemplateNullOverridesTheProfiles(t *testing.T) {
	profile := map[string]json.RawMessage{"type": raw(`"delay"`), "delay": raw(`10`),
		"pod_template": raw(`{"spec":{"priorityClassName":"urgent"}}`)}
	profiles := NewProfiles()
	for _, c := range []struct {
		fields map[string]json.RawMessage
		want   string
	}{
		{nil, "urgent"},
		{map[string]json.RawMessage{"pod_template": raw(`null`)}, ""},
		{map[string]json.RawMessage{"pod_template": raw(`{"spec":{"priorityClassName":"low"}}`)}, "low"},
	} {
		pods, err := Pods(Job{ID: "w!1", Res: 1, Fields: c.fields, Profile: profile, ProfileKey: "w/p"}, PodOptions{Profiles: profiles})
		if err != nil {
			t.Fatal(err)
		}
		if got := pods[0].Spec.PriorityClassName; got != c.want {
			t.Errorf("job fields %s: priorityClassName %q, want %q", c.fields["pod_template"], got, c.want)
		}
	}
}

// TestExclusiveHostsForJobsThatRequestNothing: with ExclusiveHosts, the
// pods of a job whose profile requests nothing (Batsim's delay and
// computing profiles) ask for one batkube.io/host each, request and limit,
// so that a job holds its hosts alone as in Batsim; a job that requests
// cpu or memory, or whose pod template does, is left as it is; without
// the option nothing is added.
func TestExclusiveHostsForJobsThatRequestNothing(t *testing.T) {
	opts := PodOptions{ExclusiveHosts: true}
	for _, tc := range []struct {
		name      string
		job       Job
		exclusive bool
	}{
		{"delay without requests", Job{ID: "w0!1", Res: 3, Profile: map[string]json.RawMessage{"type": raw(`"delay"`), "delay": raw(`10`)}}, true},
		{"computing profile (cpu is flops)", Job{ID: "w0!2", Res: 2, Profile: map[string]json.RawMessage{"type": raw(`"parallel_homogeneous"`), "cpu": raw(`1e9`), "com": raw(`0`)}}, true},
		{"delay with cpu", Job{ID: "w0!3", Res: 1, Profile: map[string]json.RawMessage{"type": raw(`"delay"`), "delay": raw(`10`), "cpu": raw(`2`)}}, false},
		{"template with requests", Job{ID: "w0!4", Res: 1, Profile: map[string]json.RawMessage{"type": raw(`"delay"`), "delay": raw(`10`),
			"pod_template": raw(`{"spec":{"containers":[{"name":"c","resources":{"requests":{"nvidia.com/gpu":"1"},"limits":{"nvidia.com/gpu":"1"}}}]}}`)}}, false},
	} {
		pods, err := Pods(tc.job, opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, p := range pods {
			res := p.Spec.Containers[0].Resources
			req, lim := res.Requests[HostResource], res.Limits[HostResource]
			if got := req.Value() == 1 && lim.Value() == 1; got != tc.exclusive {
				t.Errorf("%s: pod %s resources %v: exclusive %t, want %t", tc.name, p.Name, res, got, tc.exclusive)
			}
			if tc.exclusive && len(res.Requests) != 1 {
				t.Errorf("%s: requests %v, want only %s", tc.name, res.Requests, HostResource)
			}
		}
		if len(pods) != max(tc.job.Res, 1) {
			t.Errorf("%s: %d pods, want %d", tc.name, len(pods), tc.job.Res)
		}
	}
	pods, err := Pods(Job{ID: "w0!5", Res: 1, Profile: map[string]json.RawMessage{"type": raw(`"delay"`), "delay": raw(`1`)}}, PodOptions{})
	if err != nil || len(pods[0].Spec.Containers[0].Resources.Requests) != 0 {
		t.Errorf("without ExclusiveHosts: %v, requests %v; want none", err, pods[0].Spec.Containers[0].Resources.Requests)
	}
}
