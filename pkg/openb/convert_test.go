package openb

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const testNodes = `sn,cpu_milli,memory_mib,gpu,model
n-v100,32000,65536,2,V100M16
n-t4,16500,32768,1,T4
n-cpu,8000,16384,0,
`

const testPods = `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
whole,4000,8192,1,1000,,LS,Running,100,400,110
share,3152,1024,1,460,,BE,Succeeded,120,220,120
spec,1000,0,1,500,V100M32|V100M16,Guaranteed,Failed,130,160,140
two,2000,1024,2,1000,,Burstable,Running,140,440,150
cpu,1500,512,0,0,,XX,Running,150,300,150
pending,1000,512,0,0,,BE,Pending,160,260,
nodel,1000,512,0,0,,BE,Running,170,,170
instant,1000,512,0,0,,BE,Running,180,190,190
halfzero,1000,512,1,0,,BE,Running,190,290,190
multishare,1000,512,2,500,,BE,Running,200,300,200
toobig,64000,512,0,0,,BE,Running,210,310,210
t4only,1000,512,1,300,A10,BE,Running,220,320,220
`

// readTestTrace writes the lists into a temporary folder and reads them
// back as a user's files would be.
func readTestTrace(t *testing.T) ([]Node, []Pod) {
	t.Helper()
	dir := t.TempDir()
	nodesPath, podsPath := filepath.Join(dir, "nodes.csv"), filepath.Join(dir, "pods.csv")
	for path, text := range map[string]string{nodesPath: testNodes, podsPath: testPods} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	nodes, err := ReadNodesFile(nodesPath)
	if err != nil {
		t.Fatal(err)
	}
	pods, err := ReadPodsFile(podsPath)
	if err != nil {
		t.Fatal(err)
	}
	return nodes, pods
}

func jobIDs(w Workload) []string {
	var ids []string
	for _, j := range w.Jobs {
		ids = append(ids, j.ID)
	}
	return ids
}

func TestConvertReplaysWhatRanAndDropsTheRest(t *testing.T) {
	nodes, pods := readTestTrace(t)
	w, rep, err := Convert(nodes, pods, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"whole", "share", "spec", "two", "cpu"}; !reflect.DeepEqual(jobIDs(w), want) {
		t.Errorf("jobs %q, want %q", jobIDs(w), want)
	}
	wantDropped := map[Reason]int{ReasonNeverScheduled: 1, ReasonNoDeletionTime: 1, ReasonNoDuration: 1,
		ReasonInconsistentGPU: 1, ReasonSharedMultiGPU: 1, ReasonFitsNoNode: 2}
	if !reflect.DeepEqual(rep.Dropped, wantDropped) {
		t.Errorf("dropped %v, want %v", rep.Dropped, wantDropped)
	}
	if rep.Read != 12 || rep.Kept != 5 || w.NbRes != 3 || rep.Shift != 100 || rep.FirstSubmit != 100 || rep.LastSubmit != 150 {
		t.Errorf("report %+v, nb_res %d", rep, w.NbRes)
	}
	type want struct {
		subtime, delay float64
		cpu, memory    string
		claim, class   string
	}
	wants := map[string]want{
		"whole": {subtime: 0, delay: 290, cpu: "4", memory: "8192Mi", claim: "gpu-1", class: "openb-latency-sensitive"},
		"share": {subtime: 20, delay: 100, cpu: "3.152", memory: "1024Mi", claim: "gpu-460m", class: "openb-best-effort"},
		"spec":  {subtime: 30, delay: 20, cpu: "1", claim: "gpu-500m-v100m16-v100m32", class: "openb-guaranteed"},
		"two":   {subtime: 40, delay: 290, cpu: "2", memory: "1024Mi", claim: "gpu-2", class: "openb-burstable"},
		"cpu":   {subtime: 50, delay: 150, cpu: "1.5", memory: "512Mi"},
	}
	for _, j := range w.Jobs {
		wt := wants[j.ID]
		p := w.Profiles[j.Profile]
		if j.Subtime != wt.subtime || j.Res != 1 || p.Type != "delay" || p.Delay != wt.delay || string(p.CPU) != wt.cpu || p.Memory != wt.memory {
			t.Errorf("job %s: %+v, profile %+v, want %+v", j.ID, j, p, wt)
		}
		var claim, class string
		if p.PodTemplate != nil {
			class = p.PodTemplate.Spec.PriorityClassName
			if cs := p.PodTemplate.Spec.ResourceClaims; len(cs) == 1 {
				claim = cs[0].ResourceClaimTemplateName
				if c := p.PodTemplate.Spec.Containers; len(c) != 1 || len(c[0].Resources.Claims) != 1 || c[0].Resources.Claims[0].Name != cs[0].Name {
					t.Errorf("job %s: the container does not use the claim: %+v", j.ID, c)
				}
			}
		}
		if claim != wt.claim || class != wt.class {
			t.Errorf("job %s: claim template %q, class %q, want %q, %q", j.ID, claim, class, wt.claim, wt.class)
		}
	}
	wantTemplates := []ClaimTemplate{
		{Name: "gpu-1", Request: GPURequest{Count: 1}},
		{Name: "gpu-460m", Request: GPURequest{Count: 1, Milli: 460}},
		{Name: "gpu-500m-v100m16-v100m32", Request: GPURequest{Count: 1, Milli: 500, Models: []string{"V100M16", "V100M32"}}},
		{Name: "gpu-2", Request: GPURequest{Count: 2}},
	}
	if !reflect.DeepEqual(w.ClaimTemplates, wantTemplates) {
		t.Errorf("claim templates %+v, want %+v", w.ClaimTemplates, wantTemplates)
	}
	var classes []string
	for _, c := range w.PriorityClasses {
		classes = append(classes, c.Name)
	}
	if want := []string{"openb-latency-sensitive", "openb-guaranteed", "openb-burstable", "openb-best-effort"}; !reflect.DeepEqual(classes, want) {
		t.Errorf("priority classes %q, want %q", classes, want)
	}
}

func TestConvertOptions(t *testing.T) {
	nodes, pods := readTestTrace(t)
	for _, tt := range []struct {
		name    string
		opts    Options
		jobs    []string
		subtime float64 // of the first job
		check   func(t *testing.T, w Workload)
	}{
		{name: "window", opts: Options{From: 120, To: 140}, jobs: []string{"share", "spec"}},
		{name: "max pods", opts: Options{MaxPods: 2, KeepAbsoluteTimes: true}, jobs: []string{"whole", "share"}, subtime: 100},
		{name: "pending kept for the time it existed", opts: Options{Pending: PendingKeep, From: 160}, jobs: []string{"pending"},
			check: func(t *testing.T, w Workload) {
				if d := w.Profiles[w.Jobs[0].Profile].Delay; d != 100 {
					t.Errorf("delay %v, want deletion - creation = 100", d)
				}
			}},
		{name: "exclusive GPUs", opts: Options{ExclusiveGPUs: true, NoPriority: true}, jobs: []string{"whole", "share", "spec", "two", "cpu"},
			check: func(t *testing.T, w Workload) {
				for _, c := range w.ClaimTemplates {
					if c.Request.Milli != 0 {
						t.Errorf("template %s asks for a share", c.Name)
					}
				}
				if len(w.ClaimTemplates) != 3 || len(w.PriorityClasses) != 0 {
					t.Errorf("templates %+v, classes %+v: want gpu-1, gpu-1-v100m16-v100m32 and gpu-2, no class", w.ClaimTemplates, w.PriorityClasses)
				}
				for _, p := range w.Profiles {
					if p.PodTemplate != nil && p.PodTemplate.Spec.PriorityClassName != "" {
						t.Errorf("profile %+v names a class", p)
					}
				}
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, _, err := Convert(nodes, pods, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(jobIDs(w), tt.jobs) {
				t.Fatalf("jobs %q, want %q", jobIDs(w), tt.jobs)
			}
			if w.Jobs[0].Subtime != tt.subtime {
				t.Errorf("first subtime %v, want %v", w.Jobs[0].Subtime, tt.subtime)
			}
			if tt.check != nil {
				tt.check(t, w)
			}
		})
	}
}

func TestConvertErrors(t *testing.T) {
	nodes, pods := readTestTrace(t)
	for _, tt := range []struct {
		name  string
		nodes []Node
		opts  Options
		want  string
	}{
		{name: "no node", want: "no node"},
		{name: "empty window", nodes: nodes, opts: Options{From: 1e6}, want: "no pod left"},
		{name: "bad pending policy", nodes: nodes, opts: Options{Pending: "maybe"}, want: `pending policy "maybe"`},
	} {
		if _, _, err := Convert(tt.nodes, pods, tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

func TestGPURequestNamesAndSelector(t *testing.T) {
	r := GPURequest{Count: 1, Milli: 250, Models: []string{"A10", "V100 M32"}}
	if got := r.baseName(); got != "gpu-250m-a10-v100-m32" {
		t.Errorf("name %q", got)
	}
	if got, want := r.Selector(), `device.attributes["gpu.batkube.io"].model in ["A10", "V100 M32"]`; got != want {
		t.Errorf("selector %s, want %s", got, want)
	}
	// Two specs that differ only in case must not share a template.
	var c claimTemplates
	a, b := c.name(GPURequest{Count: 1, Models: []string{"t4"}}), c.name(GPURequest{Count: 1, Models: []string{"T4"}})
	if a == b || c.name(GPURequest{Count: 1, Models: []string{"t4"}}) != a {
		t.Errorf("names %q and %q", a, b)
	}
}
