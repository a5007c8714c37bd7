package policy

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The cases below are computed by hand from the paper's definitions (see
// each function's comment); the arithmetic is in the comments.

func TestFirstFitTakesTheFirstDevicesWithRoom(t *testing.T) {
	for _, c := range []struct {
		name string
		left []int64
		d    Demand
		want []int
		ok   bool
	}{
		{"share: the first GPU with room, not the tightest", []int64{300, 1000, 600}, Demand{GPUs: 1, Milli: 500}, []int{1}, true},
		{"whole GPUs: the first free ones", []int64{1000, 0, 1000, 1000}, Demand{GPUs: 2, Milli: 1000}, []int{0, 2}, true},
		{"a whole GPU needs a free one", []int64{999, 500}, Demand{GPUs: 1, Milli: 1000}, nil, false},
		{"no GPU asked", []int64{0}, Demand{CPU: 1000}, nil, true},
	} {
		got, ok := FirstFit(Node{GPULeft: c.left}, c.d)
		if ok != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("%s: FirstFit(%v, %+v) = %v, %v; want %v, %v", c.name, c.left, c.d, got, ok, c.want, c.ok)
		}
	}
}

func TestBestFitGPUTakesTheTightestGPU(t *testing.T) {
	n := Node{GPULeft: []int64{300, 1000, 600, 600}}
	if got, ok := BestFitGPU(n, Demand{GPUs: 1, Milli: 500}); !ok || !slices.Equal(got, []int{2}) {
		t.Errorf("share of 500 on %v: %v, %v; want [2] (600, the first of the tightest)", n.GPULeft, got, ok)
	}
	if got, ok := BestFitGPU(n, Demand{GPUs: 1, Milli: 1000}); !ok || !slices.Equal(got, []int{1}) {
		t.Errorf("a whole GPU on %v: %v, %v; want [1]", n.GPULeft, got, ok)
	}
	if _, ok := BestFitGPU(n, Demand{GPUs: 1, Milli: 700}); !ok {
		t.Error("700 fits GPU 1")
	}
	if _, ok := BestFitGPU(Node{GPULeft: []int64{200}}, Demand{GPUs: 1, Milli: 300}); ok {
		t.Error("300 does not fit a GPU with 200 left")
	}
}

func TestRandomGPUDrawsAmongTheGPUsWithRoom(t *testing.T) {
	choose := RandomGPU(rand.New(rand.NewPCG(1, 2)))
	n := Node{GPULeft: []int64{200, 1000, 500, 600}}
	seen := map[int]int{}
	for range 400 {
		gpus, ok := choose(n, Demand{GPUs: 1, Milli: 500})
		if !ok || len(gpus) != 1 {
			t.Fatalf("%v, %v", gpus, ok)
		}
		seen[gpus[0]]++
	}
	if seen[0] != 0 || seen[1] == 0 || seen[2] == 0 || seen[3] == 0 {
		t.Errorf("draws by GPU %v: want GPUs 1, 2 and 3 only, each drawn", seen)
	}
}

func TestPlaceLeavesTheNodeAsIs(t *testing.T) {
	n := Node{CPUCapacity: 8000, CPULeft: 8000, GPULeft: []int64{1000, 1000}}
	got := n.Place(Demand{CPU: 3000, GPUs: 1, Milli: 400}, []int{1})
	if got.CPULeft != 5000 || !slices.Equal(got.GPULeft, []int64{1000, 600}) {
		t.Errorf("placed: %+v", got)
	}
	if n.CPULeft != 8000 || !slices.Equal(n.GPULeft, []int64{1000, 1000}) {
		t.Errorf("the original changed: %+v", n)
	}
}

func TestKind(t *testing.T) {
	for d, want := range map[Demand]Kind{
		{CPU: 1}:               KindNone,
		{GPUs: 1, Milli: 999}:  KindShare,
		{GPUs: 1, Milli: 1000}: "1-gpu",
		{GPUs: 8, Milli: 1000}: "8-gpu",
	} {
		if got := d.Kind(); got != want {
			t.Errorf("%+v: kind %q, want %q", d, got, want)
		}
	}
}

func TestDotProduct(t *testing.T) {
	d := Demand{CPU: 8000, GPUs: 1, Milli: 500}
	for _, c := range []struct {
		n    Node
		want int64
	}{
		// cpu (64000/128000)·(8000/128000) = 0.03125, GPU (1500/8000)·(500/8000) = 0.01171875;
		// 100·(1 − 0.04296875/2) = 97.85
		{Node{CPULeft: 64000, GPULeft: []int64{1000, 500}}, 97},
		// 0.125·0.0625 + 0.0375·0.0625 = 0.01015625; 100·(1 − 0.005078125) = 99.49
		{Node{CPULeft: 16000, GPULeft: []int64{300}}, 99},
		// not enough cpu
		{Node{CPULeft: 4000, GPULeft: []int64{1000}}, 0},
	} {
		if got := DotProduct(c.n, d, DefaultScale); got != c.want {
			t.Errorf("DotProduct(%+v) = %d, want %d", c.n, got, c.want)
		}
	}
}

func TestClustering(t *testing.T) {
	n := Node{GPULeft: []int64{1000, 1000, 500, 0}} // 2500 left: 25·(8000−2500)/8000 = 17
	share := Demand{CPU: 1000, GPUs: 1, Milli: 300}
	for _, c := range []struct {
		name  string
		n     Node
		d     Demand
		kinds map[Kind]int
		want  int64
	}{
		{"only shares on the node", n, share, map[Kind]int{KindShare: 2}, 75 + 17},
		{"shares and others", n, share, map[Kind]int{KindShare: 1, "1-gpu": 1}, 50 + 17},
		{"no GPU pod", n, share, nil, 25 + 17},
		{"only other kinds", n, share, map[Kind]int{"2-gpu": 1}, 17},
		{"an idle 8-GPU node", Node{GPULeft: slices.Repeat([]int64{1000}, 8)}, share, nil, 25},
		{"an idle 2-GPU node", Node{GPULeft: []int64{1000, 1000}}, share, nil, 25 + 18}, // 25·6000/8000 = 18.75
		{"a pod without GPU", n, Demand{CPU: 1000}, map[Kind]int{KindShare: 2}, 0},
		{"whole GPUs where whole GPUs are", n, Demand{GPUs: 1, Milli: 1000}, map[Kind]int{"1-gpu": 3}, 75 + 17},
	} {
		if got := Clustering(c.n, c.d, c.kinds, DefaultScale); got != c.want {
			t.Errorf("%s: Clustering = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestPacking(t *testing.T) {
	used := Node{GPULeft: []int64{1000, 500, 200, 0}}
	share := Demand{GPUs: 1, Milli: 300}
	gpus := func(choose GPUChoice, n Node, d Demand) []int {
		g, ok := choose(n, d)
		if !ok {
			t.Fatalf("%+v does not fit %v", d, n.GPULeft)
		}
		return g
	}
	for _, c := range []struct {
		name string
		n    Node
		d    Demand
		gpus []int
		want int64
	}{
		{"an idle node of 4 GPUs: 33 − 4", Node{GPULeft: []int64{1000, 1000, 1000, 1000}}, share, []int{0}, 29},
		{"best fit: onto the GPU with 500 left: 100 − 50/10", used, share, gpus(BestFitGPU, used, share), 95},
		{"first fit: onto the free GPU 0 of a used node: 50 − 1", used, share, gpus(FirstFit, used, share), 49},
		{"two free GPUs of a used node: 50 − 2", Node{GPULeft: []int64{1000, 1000, 0, 0}}, Demand{GPUs: 2, Milli: 1000}, []int{0, 1}, 48},
		{"a GPU with 350 left: 100 − 35/10", Node{GPULeft: []int64{350, 1000}}, share, []int{0}, 97},
		{"a pod without GPU", used, Demand{CPU: 1000}, nil, 0},
	} {
		if got := Packing(c.n, c.d, c.gpus); got != c.want {
			t.Errorf("%s: Packing = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestBestFitAndNormalize(t *testing.T) {
	d := Demand{CPU: 4000, GPUs: 1, Milli: 600}
	// ½·28000/128000 + ½·1000/8000 = 0.109375 + 0.0625; 100·(1 − 0.171875) = 82.8
	a := BestFit(Node{CPULeft: 32000, GPULeft: []int64{1000, 600}}, d, DefaultScale)
	// ½·4000/128000 + ½·400/8000 = 0.015625 + 0.025; 100·(1 − 0.040625) = 95.9
	b := BestFit(Node{CPULeft: 8000, GPULeft: []int64{1000}}, d, DefaultScale)
	if a != 82 || b != 95 {
		t.Fatalf("BestFit = %d and %d, want 82 and 95", a, b)
	}
	if got := BestFit(Node{CPULeft: 2000, GPULeft: []int64{1000}}, d, DefaultScale); got != 0 {
		t.Errorf("BestFit without the cpu = %d, want 0", got)
	}
	scores := []int64{a, b, 90}
	NormalizeMinMax(scores)
	if want := []int64{0, 100, 61}; !slices.Equal(scores, want) { // (90 − 82)·100/13 = 61.5
		t.Errorf("normalised %v, want %v", scores, want)
	}
	equal := []int64{7, 7}
	NormalizeMinMax(equal)
	if !slices.Equal(equal, []int64{0, 0}) {
		t.Errorf("equal scores normalised to %v, want zeros", equal)
	}
}

// fgdWorkload: a share of 500 (half the pods), one whole GPU (0.3) and a
// cpu-only pod (0.2).
var fgdWorkload = Workload{
	{Demand: Demand{CPU: 4000, GPUs: 1, Milli: 500}, Popularity: 0.5},
	{Demand: Demand{CPU: 8000, GPUs: 1, Milli: 1000}, Popularity: 0.3},
	{Demand: Demand{CPU: 2000}, Popularity: 0.2},
}

func TestFragmentation(t *testing.T) {
	n := Node{CPULeft: 16000, Model: "T4", GPULeft: []int64{1000, 700}}
	// the share fits (nothing unusable); a whole GPU fits but not on the
	// 700 left; a cpu-only pod uses no GPU: all 1700 unusable.
	// 0.5·0 + 0.3·700 + 0.2·1700 = 550
	if got := Fragmentation(n, fgdWorkload); !near(got, 550) {
		t.Errorf("Fragmentation = %g, want 550", got)
	}
	for _, c := range []struct {
		name string
		n    Node
		pt   PodType
		want int64
	}{
		{"another model", n, PodType{Demand: Demand{CPU: 1, GPUs: 1, Milli: 100}, Models: []string{"V100M16"}}, 1700},
		{"an accepted model", n, PodType{Demand: Demand{CPU: 1, GPUs: 1, Milli: 800}, Models: []string{"V100M16", "T4"}}, 700},
		{"too much cpu", n, PodType{Demand: Demand{CPU: 16001, GPUs: 1, Milli: 100}}, 1700},
		{"more GPUs than fit", n, PodType{Demand: Demand{GPUs: 2, Milli: 1000}}, 1700},
	} {
		if got := Unusable(c.n, c.pt); got != c.want {
			t.Errorf("%s: Unusable = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestFGDScoresTheDecreaseOfFragmentation(t *testing.T) {
	n := Node{CPULeft: 16000, Model: "T4", GPULeft: []int64{1000, 700}} // fragmentation 550
	share := Demand{CPU: 2000, GPUs: 1, Milli: 300}
	// on GPU 0: [700 700]: whole GPUs no longer fit: 0.3·1400 + 0.2·1400 = 700;
	// 100·sigmoid(−0.15) = 46.3
	if got := FGD(n, share, []int{0}, fgdWorkload); got != 46 {
		t.Errorf("share on GPU 0: %d, want 46", got)
	}
	// on GPU 1: [1000 400]: the 400 is too small for both GPU types:
	// 0.5·400 + 0.3·400 + 0.2·1400 = 600; 100·sigmoid(−0.05) = 48.8
	if got := FGD(n, share, []int{1}, fgdWorkload); got != 48 {
		t.Errorf("share on GPU 1: %d, want 48", got)
	}
	if gpus, ok := FGDGPU(fgdWorkload)(n, share); !ok || !slices.Equal(gpus, []int{1}) {
		t.Errorf("FGD's GPU: %v, %v; want [1]", gpus, ok)
	}
	if gpus, _ := FirstFit(n, share); !slices.Equal(gpus, []int{0}) {
		t.Errorf("first fit: %v; want [0]", gpus)
	}
	// a whole GPU: [0 700], 8000 cpu left: 0.3·700 + 0.2·700 = 350;
	// 100·sigmoid(0.2) = 54.98
	if got := FGD(n, Demand{CPU: 8000, GPUs: 1, Milli: 1000}, []int{0}, fgdWorkload); got != 54 {
		t.Errorf("a whole GPU: %d, want 54", got)
	}
	if got := FGD(n, Demand{}, nil, fgdWorkload); got != MaxScore {
		t.Errorf("nothing asked: %d, want %d", got, MaxScore)
	}
}

func TestReadWorkload(t *testing.T) {
	w, err := ReadWorkload(strings.NewReader("gpu_milli,cpu_milli,num_gpu,gpu_spec,pods,popularity\n" +
		"500,4000,1,,10,2\n1000,8000,2,V100M16|V100M32,5,1\n0,2000,0,,5,1\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Workload{
		{Demand: Demand{CPU: 4000, GPUs: 1, Milli: 500}, Popularity: 0.5},
		{Demand: Demand{CPU: 8000, GPUs: 2, Milli: 1000}, Models: []string{"V100M16", "V100M32"}, Popularity: 0.25},
		{Demand: Demand{CPU: 2000}, Popularity: 0.25},
	}
	if len(w) != len(want) {
		t.Fatalf("%d types, want %d", len(w), len(want))
	}
	for i := range w {
		if w[i].Demand != want[i].Demand || !slices.Equal(w[i].Models, want[i].Models) || !near(w[i].Popularity, want[i].Popularity) {
			t.Errorf("type %d: %+v, want %+v", i, w[i], want[i])
		}
	}
	for _, bad := range []string{
		"",
		"cpu_milli,num_gpu,popularity\n1,0,1\n",
		"cpu_milli,num_gpu,gpu_milli,popularity\n1,2,500,1\n",
		"cpu_milli,num_gpu,gpu_milli,popularity\n1,0,500,1\n",
		"cpu_milli,num_gpu,gpu_milli,popularity\n1,1,500,NaN\n",
		"cpu_milli,num_gpu,gpu_milli,popularity\n1,1,500,0\n",
	} {
		if _, err := ReadWorkload(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestDrawsDependOnTheSeedAndTheNamesNotTheirOrder(t *testing.T) {
	a, b, other := NewDraws(5), NewDraws(5), NewDraws(6)
	names := []string{"n3", "n1", "n2", "n0"}
	reversed := slices.Clone(names)
	slices.Reverse(reversed)
	differ := false
	for range 50 {
		x := a.Pick(names)
		if y := b.Pick(reversed); x != y {
			t.Fatalf("the same seed drew %s and %s", x, y)
		}
		differ = differ || other.Pick(names) != x
	}
	if !differ {
		t.Error("seeds 5 and 6 drew the same 50 nodes")
	}
	if !slices.Equal(names, []string{"n3", "n1", "n2", "n0"}) {
		t.Errorf("Pick reordered its argument: %v", names)
	}
	if got := a.Pick(nil); got != "" {
		t.Errorf("no name: %q", got)
	}
}
