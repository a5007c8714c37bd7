package openb_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"sigs.k8s.io/yaml"

	"github.com/batkube/batkube/pkg/engine"
	"github.com/batkube/batkube/pkg/openb"
	"github.com/batkube/batkube/pkg/translate"
)

// TestBatkubeReadsTheConversion checks the three outputs with the readers
// of the rest of Batkube: the engine accepts the platform and the
// workload, package translate makes nodes of exact cpu and shared GPU
// devices of the hosts and pods of the jobs that claim the templates the
// objects define, and the objects decode strictly into their API types.
func TestBatkubeReadsTheConversion(t *testing.T) {
	nodes := []openb.Node{
		{Name: "g", CPUMilli: 32500, MemMiB: 65536, GPUs: 2, Model: "V100M16"},
		{Name: "c", CPUMilli: 8000, MemMiB: 16384},
	}
	at := func(s float64) *float64 { return &s }
	pods := []openb.Pod{
		{Name: "share", CPUMilli: 3152, MemMiB: 1024, GPUs: 1, GPUMilli: 460, GPUModels: []string{"V100M16"}, QoS: "LS", Created: 5, Scheduled: at(5), Deleted: at(65)},
		{Name: "cpu", CPUMilli: 1000, QoS: "BE", Created: 10, Scheduled: at(12), Deleted: at(20)},
	}
	w, _, err := openb.Convert(nodes, pods, openb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var platform, workload, objects bytes.Buffer
	if err := openb.WritePlatform(&platform, nodes, openb.PlatformOptions{Comment: "test -- platform"}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteJSON(&workload); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteObjects(&objects, "test objects"); err != nil {
		t.Fatal(err)
	}

	p, err := engine.ParsePlatform(&platform)
	if err != nil {
		t.Fatalf("the engine rejects the platform: %v", err)
	}
	if p.Master != openb.MasterHost || len(p.Resources) != 2 {
		t.Fatalf("master %q, %d resources", p.Master, len(p.Resources))
	}
	var r engine.Resource
	for _, res := range p.Resources {
		if res.Name == "g" {
			r = res
		}
	}
	host := translate.Host{ID: r.ID, Name: r.Name, Properties: r.Properties}
	node, err := translate.Node(host, translate.NodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cpu := node.Status.Capacity[corev1.ResourceCPU]; cpu.MilliValue() != 32500 {
		t.Errorf("node cpu %s, want 32500m", cpu.String())
	}
	if mem := node.Status.Capacity[corev1.ResourceMemory]; mem.Value() != 65536<<20 {
		t.Errorf("node memory %s, want 65536Mi", mem.String())
	}
	slice, err := translate.ResourceSlice(host, node)
	if err != nil || slice == nil || len(slice.Spec.Devices) != 2 {
		t.Fatalf("slice %+v, %v", slice, err)
	}
	if d := slice.Spec.Devices[0]; d.AllowMultipleAllocations == nil || !*d.AllowMultipleAllocations || *d.Attributes["model"].StringValue != "V100M16" {
		t.Errorf("device %+v: want a shared V100M16", d)
	}

	ew, err := engine.ParseWorkload(&workload, "openb")
	if err != nil {
		t.Fatalf("the engine rejects the workload: %v", err)
	}
	if ew.NbRes != 2 || len(ew.Jobs) != 2 || ew.Jobs[0].Subtime != 0 || ew.Jobs[1].Subtime != 5 {
		t.Fatalf("engine workload: nb_res %d, jobs %+v", ew.NbRes, ew.Jobs)
	}
	var claimed string
	for _, j := range ew.Jobs {
		prof := ew.Profiles[j.Profile]
		if prof.Type != engine.ProfileDelay {
			t.Errorf("job %s: profile type %v", j.ID, prof.Type)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(prof.Raw, &fields); err != nil {
			t.Fatal(err)
		}
		ps, err := translate.Pods(translate.Job{ID: j.ID, Res: j.Res, Profile: fields}, translate.PodOptions{})
		if err != nil {
			t.Fatalf("job %s: %v", j.ID, err)
		}
		pod := ps[0]
		req := pod.Spec.Containers[0].Resources.Requests
		switch j.Name {
		case "share":
			if cpu := req[corev1.ResourceCPU]; cpu.MilliValue() != 3152 || pod.Spec.PriorityClassName != "openb-latency-sensitive" || len(pod.Spec.ResourceClaims) != 1 {
				t.Errorf("pod %s: requests %v, class %q, claims %+v", pod.Name, req, pod.Spec.PriorityClassName, pod.Spec.ResourceClaims)
			} else {
				claimed = *pod.Spec.ResourceClaims[0].ResourceClaimTemplateName
			}
		case "cpu":
			if _, ok := req[corev1.ResourceMemory]; ok || pod.Spec.PriorityClassName != "openb-best-effort" || len(pod.Spec.ResourceClaims) != 0 {
				t.Errorf("pod %s: requests %v, class %q, claims %+v", pod.Name, req, pod.Spec.PriorityClassName, pod.Spec.ResourceClaims)
			}
		}
	}

	var templates []resourcev1.ResourceClaimTemplate
	var classes []schedulingv1.PriorityClass
	for _, doc := range strings.Split(objects.String(), "\n---\n") {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "ResourceClaimTemplate":
			var o resourcev1.ResourceClaimTemplate
			if err := yaml.UnmarshalStrict([]byte(doc), &o); err != nil {
				t.Fatal(err)
			}
			templates = append(templates, o)
		case "PriorityClass":
			var o schedulingv1.PriorityClass
			if err := yaml.UnmarshalStrict([]byte(doc), &o); err != nil {
				t.Fatal(err)
			}
			if o.PreemptionPolicy == nil || *o.PreemptionPolicy != corev1.PreemptNever {
				t.Errorf("class %s preempts", o.Name)
			}
			classes = append(classes, o)
		default:
			t.Errorf("object of kind %q", meta.Kind)
		}
	}
	if len(templates) != 1 || len(classes) != 2 {
		t.Fatalf("%d templates, %d classes, want 1 and 2", len(templates), len(classes))
	}
	tmpl := templates[0]
	exact := tmpl.Spec.Spec.Devices.Requests[0].Exactly
	if tmpl.Name != claimed || exact.DeviceClassName != translate.GPUDriver || exact.Count != 1 {
		t.Fatalf("template %s (the pod claims %s): %+v", tmpl.Name, claimed, exact)
	}
	if milli := exact.Capacity.Requests[translate.GPUMilliCapacity]; milli.Value() != 460 {
		t.Errorf("template asks for %s milli, want 460", milli.String())
	}
	if len(exact.Selectors) != 1 || exact.Selectors[0].CEL.Expression != `device.attributes["gpu.batkube.io"].model in ["V100M16"]` {
		t.Errorf("selectors %+v", exact.Selectors)
	}
}
