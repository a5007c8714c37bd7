package swf_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batkube/batkube/pkg/engine"
	"github.com/batkube/batkube/pkg/swf"
)

// TestEngineReadsConvertedWorkload checks that the project's own workload
// reader accepts what Convert writes, and sees a job of P processors on
// C-core hosts as ceil(P/C) hosts of ceil(P/hosts) cores.
func TestEngineReadsConvertedWorkload(t *testing.T) {
	const trace = `; Version: 2.2
; MaxProcs: 64
1 0  5 100   10 -1 -1 10 3600 2097152 1 1 1 1 1 1 -1 -1
2 30 0 42.5  1  -1 -1 -1 -1   -1      0 1 1 1 1 1 -1 -1
3 60 0 7     33 -1 -1 33 60   -1      5 1 1 1 1 1 -1 -1
`
	for _, tt := range []struct {
		name    string
		opts    swf.Options
		wantRes map[string]int
		wantCPU map[string]float64
		wantMem map[string]string
	}{
		{
			name:    "one processor per host",
			opts:    swf.Options{},
			wantRes: map[string]int{"1": 10, "2": 1, "3": 33},
		},
		{
			name:    "4-core hosts",
			opts:    swf.Options{CoresPerHost: 4},
			wantRes: map[string]int{"1": 3, "2": 1, "3": 9},
			wantCPU: map[string]float64{"1": 4, "2": 1, "3": 4},
			wantMem: map[string]string{"1": "8Gi"},
		},
		{
			name:    "16-core hosts",
			opts:    swf.Options{CoresPerHost: 16, Walltime: swf.WalltimeRequested},
			wantRes: map[string]int{"1": 1, "2": 1, "3": 3},
			wantCPU: map[string]float64{"1": 10, "2": 1, "3": 11},
			wantMem: map[string]string{"1": "20Gi"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := swf.Read(strings.NewReader(trace))
			if err != nil {
				t.Fatal(err)
			}
			w, _, err := swf.Convert(tr, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "trace.json")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.WriteJSON(f); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			ew, err := engine.ReadWorkloadFile(path, "")
			if err != nil {
				t.Fatalf("the engine rejects the workload: %v", err)
			}
			if ew.NbRes != w.NbRes || len(ew.Jobs) != len(tt.wantRes) {
				t.Fatalf("engine sees nb_res %d and %d jobs, want %d and %d", ew.NbRes, len(ew.Jobs), w.NbRes, len(tt.wantRes))
			}
			for i, j := range ew.Jobs {
				if j.Name != strings.TrimPrefix(j.ID, "trace!") || j.Res != tt.wantRes[j.Name] {
					t.Errorf("job %s: res %d, want %d", j.ID, j.Res, tt.wantRes[j.Name])
				}
				if j.Subtime != w.Jobs[i].Subtime {
					t.Errorf("job %s: subtime %v, want %v", j.ID, j.Subtime, w.Jobs[i].Subtime)
				}
				wantWalltime := w.Jobs[i].Walltime
				if wantWalltime == 0 {
					wantWalltime = -1
				}
				if j.Walltime != wantWalltime {
					t.Errorf("job %s: walltime %v, want %v", j.ID, j.Walltime, wantWalltime)
				}
				p := ew.Profiles[j.Profile]
				if p.Type != engine.ProfileDelay || p.Delay != w.Profiles[j.Profile].Delay {
					t.Errorf("job %s: profile %+v, want a delay of %v", j.ID, p, w.Profiles[j.Profile].Delay)
				}
				var requests struct {
					CPU    *float64 `json:"cpu"`
					Memory *string  `json:"memory"`
				}
				if err := json.Unmarshal(p.Raw, &requests); err != nil {
					t.Fatal(err)
				}
				if cpu, ok := tt.wantCPU[j.Name]; ok != (requests.CPU != nil) || ok && *requests.CPU != cpu {
					t.Errorf("job %s: profile %s, want cpu %v", j.ID, p.Raw, cpu)
				}
				if mem, ok := tt.wantMem[j.Name]; ok != (requests.Memory != nil) || ok && *requests.Memory != mem {
					t.Errorf("job %s: profile %s, want memory %q", j.ID, p.Raw, mem)
				}
			}
		})
	}
}
