package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batkube/batkube/pkg/openb"
)

const (
	nodesCSV = "sn,cpu_milli,memory_mib,gpu,model\ng0,32000,65536,2,T4\nc0,8000,16384,0,\n"
	podsCSV  = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n" +
		"a,1000,1024,1,250,,LS,Running,50,150,60\n" +
		"b,2000,0,0,0,,BE,Pending,70,80,\n"
)

// writeLists writes a node list and a pod list into a temporary folder.
func writeLists(t *testing.T, nodes, pods string) (dir, nodesPath, podsPath string) {
	t.Helper()
	dir = t.TempDir()
	nodesPath, podsPath = filepath.Join(dir, "nodes.csv"), filepath.Join(dir, "pods.csv")
	if err := os.WriteFile(nodesPath, []byte(nodes), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(podsPath, []byte(pods), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, nodesPath, podsPath
}

func TestRunWritesTheThreeFiles(t *testing.T) {
	dir, nodes, pods := writeLists(t, nodesCSV, podsCSV)
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-o", out, nodes, pods}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"read 2 pods, kept 1, dropped 1", "dropped 1 never-scheduled", "1 ResourceClaimTemplates",
		`qos "LS": 1 pods (PriorityClass openb-latency-sensitive)`} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("report %q lacks %q", stderr.String(), want)
		}
	}
	var noPriority bytes.Buffer
	if code := run([]string{"--no-priority", "-o", filepath.Join(dir, "np"), nodes, pods}, &stdout, &noPriority); code != 0 {
		t.Fatalf("--no-priority: exit %d: %s", code, noPriority.String())
	}
	if want := `qos "LS": 1 pods (no PriorityClass)`; !strings.Contains(noPriority.String(), want) {
		t.Errorf("--no-priority: report %q lacks %q", noPriority.String(), want)
	}
	platform, err := os.ReadFile(filepath.Join(out, platformFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(platform), `<host id="g0" speed="1Gf"><prop id="core" value="32"/><prop id="memory" value="65536Mi"/><prop id="gpu" value="2"/><prop id="gpu_model" value="T4"/><prop id="gpu_shared" value="true"/></host>`) {
		t.Errorf("platform:\n%s", platform)
	}
	data, err := os.ReadFile(filepath.Join(out, workloadFile))
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		NbRes       int    `json:"nb_res"`
		Description string `json:"description"`
		Jobs        []struct {
			ID      string  `json:"id"`
			Subtime float64 `json:"subtime"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		t.Fatalf("workload: %v", err)
	}
	if w.NbRes != 2 || len(w.Jobs) != 1 || w.Jobs[0].ID != "a" || w.Jobs[0].Subtime != 0 || strings.Contains(w.Description, out) {
		t.Errorf("workload %+v", w)
	}
	objects, err := os.ReadFile(filepath.Join(out, objectsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(objects), "name: gpu-250m") || !strings.Contains(string(objects), "name: openb-latency-sensitive") {
		t.Errorf("objects:\n%s", objects)
	}

	// The target workload: both pods fit a node (b, cpu only, on c0), one
	// pod a type; on a tie the larger cpu first.
	target, err := os.ReadFile(filepath.Join(out, "target-workload.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "cpu_milli,num_gpu,gpu_milli,gpu_spec,pods,popularity\n2000,0,0,,1,0.5\n1000,1,250,,1,0.5\n"; string(target) != want {
		t.Errorf("target-workload.csv:\n%s\nwant:\n%s", target, want)
	}

	// --exclusive-gpus: no shared GPU, the share asks for a whole one.
	if code := run([]string{"-q", "--exclusive-gpus", "-o", out, nodes, pods}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d", code)
	}
	platform, _ = os.ReadFile(filepath.Join(out, platformFile))
	objects, _ = os.ReadFile(filepath.Join(out, objectsFile))
	if strings.Contains(string(platform), "gpu_shared") || !strings.Contains(string(objects), "name: gpu-1\n") {
		t.Errorf("exclusive: platform\n%s\nobjects\n%s", platform, objects)
	}
}

func TestRunErrors(t *testing.T) {
	dir, nodes, pods := writeLists(t, nodesCSV, podsCSV)
	_, badNodes, _ := writeLists(t, "sn,cpu_milli\nx,1\n", podsCSV)
	out := filepath.Join(dir, "out")
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no out dir", []string{nodes, pods}, 2, "--out-dir"},
		{"one list", []string{"-o", out, nodes}, 2, "want a node list and a pod list"},
		{"three lists", []string{"-o", out, nodes, pods, pods}, 2, "unexpected argument"},
		{"bad pending", []string{"-o", out, "--pending", "later", nodes, pods}, 2, "later"},
		{"empty window", []string{"-o", out, "--from", "10", "--to", "5", nodes, pods}, 2, "the window is empty"},
		{"negative max", []string{"-o", out, "--max-pods", "-1", nodes, pods}, 2, "--max-pods -1"},
		{"no target coverage", []string{"-o", out, "--target-coverage", "0", nodes, pods}, 2, "--target-coverage 0"},
		{"missing file", []string{"-o", out, filepath.Join(dir, "none.csv"), pods}, 1, "cannot read the node list"},
		{"bad node list", []string{"-o", out, badNodes, pods}, 1, "missing column(s) memory_mib"},
		{"nothing left", []string{"-o", out, "--from", "1000", nodes, pods}, 1, "no pod left"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), tt.code, tt.want)
			}
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed run created the output folder")
	}
}

func TestHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"NODES.csv PODS.csv", "--out-dir", "--pending", "--exclusive-gpus", "ResourceClaimTemplates"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

// TestArrivalsWritesTheirListAndAllocationReadsARun: --arrivals writes
// arrivals.csv beside the workload (every job in it, one a second); the
// allocation subcommand reads it with a run's _pods.csv and prints the
// curve, the paper's policies beside it; a wrong call is a usage error.
func TestArrivalsWritesTheirListAndAllocationReadsARun(t *testing.T) {
	dir, nodes, pods := writeLists(t, nodesCSV, podsCSV)
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-q", "-o", out, "--arrivals", "100", "--seed", "1", nodes, pods}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	arrivals, err := os.ReadFile(filepath.Join(out, "arrivals.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// The nodes come ranked: the platform's hosts and nodes.csv in the
	// same order, each name prefixed with its rank.
	ranked, err := openb.ReadNodesFile(filepath.Join(out, openb.NodesFile))
	if err != nil {
		t.Fatal(err)
	}
	platform, err := os.ReadFile(filepath.Join(out, "platform.xml"))
	if err != nil {
		t.Fatal(err)
	}
	at := 0
	for i, n := range ranked {
		if !strings.HasPrefix(n.Name, fmt.Sprintf("%04d-", i)) {
			t.Errorf("nodes.csv's node %d is %q: want its rank as a prefix", i, n.Name)
		}
		j := strings.Index(string(platform[at:]), `<host id="`+n.Name+`"`)
		if j < 0 {
			t.Fatalf("platform.xml has no host %q after the previous node's:\n%s", n.Name, platform)
		}
		at += j + 1
	}
	// Pod a asks for 250 of the 2,000 milli: a and seven draws of it reach
	// 100 %; pod b (and its draws) asks for no GPU, in between.
	lines := strings.Split(strings.TrimSpace(string(arrivals)), "\n")
	if lines[0] != "pod,arrived_at,gpu_milli,capacity_milli" || strings.Count(string(arrivals), ",250,2000") != 8 {
		t.Fatalf("arrivals.csv:\n%s", arrivals)
	}
	run1 := filepath.Join(dir, "run")
	if err := os.MkdirAll(run1, 0o755); err != nil {
		t.Fatal(err)
	}
	var podsRows strings.Builder
	podsRows.WriteString("job_id,started,devices\n")
	for i, l := range lines[1:] {
		name, rest, _ := strings.Cut(l, ",")
		at, _, _ := strings.Cut(rest, ",")
		if strings.HasPrefix(name, "b") {
			podsRows.WriteString("w!" + name + "," + at + ",\n")
			continue
		}
		podsRows.WriteString("w!" + name + "," + at + ",g0/gpu-" + string(rune('0'+i%2)) + ":milli=250\n")
	}
	if err := os.WriteFile(filepath.Join(run1, "_pods.csv"), []byte(podsRows.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	paper := filepath.Join(dir, "paper.csv")
	if err := os.WriteFile(paper, []byte("workload,policy,arrived_gpu_percent,allocated_gpu_percent_mean,min,max,seeds\nx,06-FGD,100,95.23,95,95.5,10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if code := run([]string{"allocation", "--step", "50", "--paper", paper, filepath.Join(out, "arrivals.csv"), run1}, &stdout, &stderr); code != 0 {
		t.Fatalf("allocation: exit %d: %s", code, stderr.String())
	}
	last := strings.Fields(strings.Split(strings.TrimSpace(stdout.String()), "\n")[3])
	if len(last) != 4 || last[0] != "100" || last[2] != "100.00" || last[3] != "95.23" {
		t.Errorf("allocation printed:\n%s\nwant its 100 %% row: 100 %% arrived, this run 100.00, FGD 95.23", stdout.String())
	}
	if code := run([]string{"allocation", filepath.Join(out, "arrivals.csv")}, &stdout, &stderr); code != 2 {
		t.Errorf("allocation with one argument: exit %d, want 2", code)
	}
}
