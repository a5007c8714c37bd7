package replay

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batkube/batkube/examples/schedulers/gpupolicies/policy"
)

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// lists writes a node list (g: 2 T4 GPUs, 16 cores; c: 8 cores, no GPU),
// a pod list and arrivals.csv; the shares s1 600, s2 800, s3 150, s4 400
// arrive in that order, then s3 again (s3-r1) and a cpu-only pod.
func lists(t *testing.T) (nodes []Node, arrivals []Arrival) {
	t.Helper()
	dir := t.TempDir()
	nodesPath := write(t, dir, "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\ng,16000,65536,2,T4\nC_1,8000,16384,0,\n")
	podsPath := write(t, dir, "pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"+
		"s1,1000,1024,1,600,\ns2,1000,1024,1,800,T4\ns3,1000,1024,1,150,\ns4,1000,1024,1,400,V100M16|T4\ncpu,2000,1024,0,0,\n")
	arrivalsPath := write(t, dir, "arrivals.csv", "pod,arrived_at,gpu_milli,capacity_milli\n"+
		"s1,0,600,2000\ns2,1,800,2000\ns3,2,150,2000\ns4,3,400,2000\ns3-r1,4,150,2000\ncpu,5,0,2000\n")
	var err error
	if nodes, err = ReadNodes(nodesPath); err != nil {
		t.Fatal(err)
	}
	pods, err := ReadPods(podsPath)
	if err != nil {
		t.Fatal(err)
	}
	var capacity int64
	if arrivals, capacity, err = ReadArrivals(arrivalsPath, pods); err != nil {
		t.Fatal(err)
	}
	if capacity != 2000 || len(arrivals) != 6 || arrivals[4].Name != "s3-r1" || arrivals[4].Demand != arrivals[2].Demand ||
		!slices.Equal(arrivals[3].Models, []string{"V100M16", "T4"}) || arrivals[5].Demand != (policy.Demand{CPU: 2000}) {
		t.Fatalf("arrivals %+v, capacity %d", arrivals, capacity)
	}
	return nodes, arrivals
}

// TestRunFirstFitAgainstThePapersGPUs: with BestFit, the shares all go to
// g; s1 takes GPU 0, s2 GPU 1 (800: 200 left), s3 GPU 0 under first fit
// (400 left: 250 left) but GPU 1 with the paper's best fit (200 left: 50
// left), so that s4 (400) then fits GPU 0 for the paper only; s3-r1 fits
// both (first fit: GPU 0, 250 → 100; paper: GPU 0 is 0 then... it has 0
// left, GPU 1 50: no room).
func TestRunFirstFitAgainstThePapersGPUs(t *testing.T) {
	nodes, arrivals := lists(t)
	want := map[Mode][]Placement{
		FirstFitGPUs: {{0, []int{0}}, {0, []int{1}}, {0, []int{0}}, {-1, nil}, {0, []int{0}}, {1, nil}},
		PaperGPUs:    {{0, []int{0}}, {0, []int{1}}, {0, []int{1}}, {0, []int{0}}, {-1, nil}, {1, nil}},
	}
	allocated := map[Mode]int64{FirstFitGPUs: 600 + 800 + 150 + 150, PaperGPUs: 600 + 800 + 150 + 400}
	for mode, placements := range want {
		res, err := Run(nodes, arrivals, Options{Policy: BestFit, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range res.Placements {
			if p.Node != placements[i].Node || !slices.Equal(p.GPUs, placements[i].GPUs) {
				t.Errorf("%s: arrival %d (%s) placed %+v, want %+v", mode, i+1, arrivals[i].Name, p, placements[i])
			}
		}
		if got := res.Allocated[len(res.Allocated)-1]; got != allocated[mode] {
			t.Errorf("%s: %d allocated, want %d", mode, got, allocated[mode])
		}
	}
	res, _ := Run(nodes, arrivals, Options{Policy: BestFit, Mode: PaperGPUs})
	// arrived 600 (30 %), 1400 (70 %), 1550, 1950 (97.5 %), 2100 (105 %);
	// allocated then 30, 70, 77.5, 97.5, 97.5 %.
	got := Curve(arrivals, res, 50)
	if want := []Point{{0, 30}, {50, 70}, {100, 97.5}}; !slices.Equal(got, want) {
		t.Errorf("curve %v, want %v", got, want)
	}
}

// TestCheck: a run that did what first fit and the policy do passes; one
// that took another GPU, another node or let a pod wait with room does
// not. Random's draws are replayed exactly.
func TestCheck(t *testing.T) {
	nodes, arrivals := lists(t)
	for _, name := range Policies() {
		opts := Options{Policy: name, Seed: 3, TieSeed: 1}
		if name == FGD {
			opts.Workload = policy.Workload{{Demand: policy.Demand{CPU: 1000, GPUs: 1, Milli: 500}, Popularity: 1}}
		}
		res, err := Run(nodes, arrivals, opts)
		if err != nil {
			t.Fatal(err)
		}
		observed := observe(nodes, arrivals, res)
		r, err := Check(nodes, arrivals, observed, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Problems) > 0 || r.Placed+r.Waited != len(arrivals) {
			t.Errorf("%s: its own run: %+v", name, r)
		}
	}
	opts := Options{Policy: Packing}
	res, _ := Run(nodes, arrivals, opts)
	for _, c := range []struct {
		name   string
		change func(map[string]Observed)
		want   string
	}{
		{"another GPU", func(o map[string]Observed) { o["s3"] = Observed{Started: true, Node: "g", GPUs: []int{1}} }, "the first with room are [0]"},
		{"waited with room", func(o map[string]Observed) { o["s1"] = Observed{} }, "waited while 1 node(s) had room"},
		{"no room", func(o map[string]Observed) { o["s4"] = Observed{Started: true, Node: "g", GPUs: []int{0}} }, "placed on node g, which has no room"},
		{"no preference", func(o map[string]Observed) { o["cpu"] = Observed{Started: true, Node: "g"} }, ""}, // Packing: 0 for a cpu-only pod
		{"missing", func(o map[string]Observed) { delete(o, "s4") }, "not in the run"},
	} {
		observed := observe(nodes, arrivals, res)
		c.change(observed)
		r, err := Check(nodes, arrivals, observed, opts)
		if err != nil {
			t.Fatal(err)
		}
		if c.want == "" {
			if len(r.Problems) != 0 {
				t.Errorf("%s: %v", c.name, r.Problems)
			}
			continue
		}
		if len(r.Problems) == 0 || !strings.Contains(strings.Join(r.Problems, "\n"), c.want) {
			t.Errorf("%s: problems %q, want %q", c.name, r.Problems, c.want)
		}
	}
	// BestFit prefers the tighter node: the cpu pod on g (16 cores, 2 GPUs
	// mostly used) rather than c-1? ½·(16000−4000−2000)/128000 +
	// ½·(2000−1700)/8000 = 0.0578 against ½·6000/128000 = 0.0234: c-1.
	observed := observe(nodes, arrivals, res)
	observed["cpu"] = Observed{Started: true, Node: "g"}
	if r, _ := Check(nodes, arrivals, observed, Options{Policy: BestFit}); len(r.Problems) == 0 {
		t.Error("BestFit: a cpu-only pod on the looser node passed")
	}
}

// observe turns a Run into what a kube-scheduler run would have logged.
func observe(nodes []Node, arrivals []Arrival, res Result) map[string]Observed {
	out := map[string]Observed{}
	for i, a := range arrivals {
		p := res.Placements[i]
		if p.Node < 0 {
			out[a.Name] = Observed{}
			continue
		}
		out[a.Name] = Observed{Started: true, Node: NodeName(nodes[p.Node].Name), GPUs: p.GPUs}
	}
	return out
}

func TestReadRun(t *testing.T) {
	nodes, arrivals := lists(t)
	dir := t.TempDir()
	write(t, dir, "_pods.csv", "job_id,node,started,devices\n"+
		"w0!s1,g,0,g/gpu-0:milli=600\nw0!s2,g,1,g/gpu-1:milli=800\nw0!s3,g,2,g/gpu-0:milli=150\nw0!s4,g,7,g/gpu-0:milli=400\n"+
		"w0!s3-r1,g,4,g/gpu-0:milli=150\nw0!cpu,c-1,5,\n")
	observed, err := ReadRun(dir, arrivals)
	if err != nil {
		t.Fatal(err)
	}
	if o := observed["s2"]; !o.Started || o.Node != "g" || !slices.Equal(o.GPUs, []int{1}) {
		t.Errorf("s2: %+v", o)
	}
	if o := observed["s4"]; o.Started {
		t.Errorf("s4 started after its arrival: %+v", o)
	}
	r, err := Check(nodes, arrivals, observed, Options{Policy: Packing})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 0 || r.Placed != 5 || r.Waited != 1 {
		t.Errorf("report %+v", r)
	}
	write(t, dir, "_pods.csv", "job_id,node,started,devices\nw0!s1,g,0,h/gpu-0\n")
	if _, err := ReadRun(dir, arrivals); err == nil {
		t.Error("a device of another node: no error")
	}
}

// TestFirstOfTiesTakesTheFirstOfEqualNodes: four identical empty nodes,
// pods that each fill one: every pod finds the empty nodes scored alike.
// FirstOfTies takes them in the list's order; draws (seeded) another
// order.
func TestFirstOfTiesTakesTheFirstOfEqualNodes(t *testing.T) {
	var nodes []Node
	var arrivals []Arrival
	for i := range 4 {
		nodes = append(nodes, Node{Name: fmt.Sprintf("n%d", i), CPU: 1000, MemMiB: 1024})
		arrivals = append(arrivals, Arrival{Pod: Pod{Name: fmt.Sprintf("p%d", i), Demand: policy.Demand{CPU: 1000}}})
	}
	order := func(opts Options) []int {
		res, err := Run(nodes, arrivals, opts)
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for _, p := range res.Placements {
			out = append(out, p.Node)
		}
		return out
	}
	if got := order(Options{Policy: BestFit, FirstOfTies: true}); !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Errorf("FirstOfTies placed the pods on %v, want 0 1 2 3", got)
	}
	if got := order(Options{Policy: BestFit, TieSeed: 1}); slices.Equal(got, []int{0, 1, 2, 3}) || len(got) != 4 {
		t.Errorf("draws placed the pods on %v, want another order of the four", got)
	}
}
