package swf

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fixture holds every kind of header comment and record the conversion
// handles. Its lines are out of submit order on purpose, with CRLF, tabs and
// leading spaces here and there. Fields: job submit wait run alloc avgcpu
// usedmem reqproc reqtime reqmem status user group exe queue partition
// preceding think.
const fixture = `; Version: 2.2
; Computer: Hand-made test cluster
; Installation: nowhere
; Acknowledge: nobody
; Information: written for pkg/swf's tests
; Conversion: none
; MaxJobs: 16
; MaxRecords: 18
; Preemption: Double
; UnixStartTime: 1000000000
; TimeZoneString: Europe/Paris
; StartTime: Sun Sep 09 03:46:40 CEST 2001
; EndTime:   Sun Sep 09 04:00:00 CEST 2001
; MaxNodes: 8
; MaxProcs: 32
; MaxRuntime: 86400
; MaxMemory: 4194304
; AllowOveruse: False
; MaxQueues: 1
; Queues: one batch queue
; Queue: 1 batch
; MaxPartitions: 1
; Partition: 1 all nodes
; Note: free comments follow
;
;   a free comment

1  50  10  60   2  55   -1  2  300  -1  1 1 1 1 1 1 -1 -1
2  100 5   120  4  110.5 900000 4 3600 1048576 1 2 1 3 1 1 -1 -1
17 150 0   15   2  -1   -1  2  100  -1  1 6 1 1 1 1 -1 -1
3  150 0   30   1  -1   -1  1  20   -1  0 3 2 -1 -1 -1 -1 -1
4  200 -1  -1   -1 -1   -1  8  600  -1  5 4 2 1 1 1 -1 -1` + "\r\n" + `
5	250	10	45	8	40	2048	8	600	-1	5	1	1	2	1	1	-1	-1
   6 300 -1 90 -1 -1 -1 3 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1
7  350 0   200  6  190  -1  -1 1000 512000 1 5 1 1 1 1 -1 -1
8  400 30  600.5 10.0 590 -1 10 7200 262144 1 5 1 1 1 1 7 12
9  450 5   100  4  95   -1  4  150  -1  1 2 1 1 1 1 -1 -1
9  450 5   60   4  55   -1  4  150  -1  2 2 1 1 1 1 -1 -1
9  520 0   40   4  38   -1  4  150  -1  3 2 1 1 1 1 -1 -1
10 500 0   0    1  0    -1  1  60   -1  1 1 1 1 1 1 -1 -1
11 550 0   10   -1 -1   -1  -1 60   -1  1 1 1 1 1 1 -1 -1
2  600 0   10   1  -1   -1  1  60   -1  1 1 1 1 1 1 -1 -1
13 1000 0  10   1  -1   -1  1  60   -1  1 1 1 1 1 1 -1 -1
14 700 0   10   40 -1   -1  40 60   -1  1 1 1 1 1 1 -1 -1
16 120 0   10   1  -1   -1  1  -1   -1  1 1 1 1 1 1 -1 -1
`

// writeFixture writes the fixture, gzip-compressed, and returns its path.
func writeFixture(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte(fixture)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "fixture.swf.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConvertFixtureWithCoresPerHost(t *testing.T) {
	tr, err := ReadFile(writeFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Header) != 26 || len(tr.Records) != 18 {
		t.Fatalf("read %d header lines and %d records, want 26 and 18", len(tr.Header), len(tr.Records))
	}
	w, rep, err := Convert(tr, Options{CoresPerHost: 4, From: 100, To: 1000})
	if err != nil {
		t.Fatal(err)
	}
	wantJobs := []Job{
		{ID: 2, Subtime: 0, Res: 1, Walltime: 3600, Profile: "d120_c4_m4Gi"},      // completed, 1 GiB per processor
		{ID: 16, Subtime: 20, Res: 1, Walltime: 20, Profile: "d10_c1"},            // out of order in the file; no requested time
		{ID: 3, Subtime: 50, Res: 1, Walltime: 60, Profile: "d30_c1"},             // failed: kept; 2 x run time > requested
		{ID: 17, Subtime: 50, Res: 1, Walltime: 100, Profile: "d15_c2"},           // same submit time as 3: after it
		{ID: 5, Subtime: 150, Res: 2, Walltime: 600, Profile: "d45_c4"},           // cancelled after it started: kept
		{ID: 6, Subtime: 200, Res: 1, Walltime: 180, Profile: "d90_c3"},           // -1 in every optional field
		{ID: 7, Subtime: 250, Res: 2, Walltime: 1000, Profile: "d200_c3_m1500Mi"}, // requested processors -1: 6 allocated
		{ID: 8, Subtime: 300, Res: 3, Walltime: 7200, Profile: "d600.5_c4_m1Gi"},  // 10 processors on 3 hosts of 4 cores
		{ID: 9, Subtime: 350, Res: 1, Walltime: 200, Profile: "d100_c4"},          // summary line of a checkpointed job
	}
	if !reflect.DeepEqual(w.Jobs, wantJobs) {
		t.Errorf("jobs:\n got %+v\nwant %+v", w.Jobs, wantJobs)
	}
	wantProfiles := map[string]Profile{
		"d120_c4_m4Gi":    {Type: "delay", Delay: 120, CPU: 4, Memory: "4Gi"},
		"d10_c1":          {Type: "delay", Delay: 10, CPU: 1},
		"d30_c1":          {Type: "delay", Delay: 30, CPU: 1},
		"d15_c2":          {Type: "delay", Delay: 15, CPU: 2},
		"d45_c4":          {Type: "delay", Delay: 45, CPU: 4},
		"d90_c3":          {Type: "delay", Delay: 90, CPU: 3},
		"d200_c3_m1500Mi": {Type: "delay", Delay: 200, CPU: 3, Memory: "1500Mi"},
		"d600.5_c4_m1Gi":  {Type: "delay", Delay: 600.5, CPU: 4, Memory: "1Gi"},
		"d100_c4":         {Type: "delay", Delay: 100, CPU: 4},
	}
	if !reflect.DeepEqual(w.Profiles, wantProfiles) {
		t.Errorf("profiles:\n got %+v\nwant %+v", w.Profiles, wantProfiles)
	}
	if w.NbRes != 8 {
		t.Errorf("nb_res %d, want 8 (MaxProcs 32 / 4 cores)", w.NbRes)
	}
	wantReport := Report{
		Read: 18, Kept: 9,
		Dropped: map[string]int{
			ReasonBeforeFrom:           1, // job 1
			ReasonCancelledBeforeStart: 1, // job 4
			ReasonPartialExecution:     2, // job 9's parts
			ReasonZeroRunTime:          1, // job 10
			ReasonNoProcessors:         1, // job 11
			ReasonDuplicateJobNumber:   1, // the second job 2
			ReasonAfterTo:              1, // job 13, at To
			ReasonBiggerThanPlatform:   1, // job 14: 40 processors, 10 hosts > 8
		},
		FirstSubmit: 100, LastSubmit: 450, Shift: 100,
		Largest: LargestJob{JobNumber: 8, Processors: 10, Hosts: 3},
		NbRes:   8, NbResFrom: "header MaxProcs", Profiles: 9,
	}
	if !reflect.DeepEqual(rep, wantReport) {
		t.Errorf("report:\n got %+v\nwant %+v", rep, wantReport)
	}
	if rep.DroppedTotal()+rep.Kept != rep.Read {
		t.Errorf("%d dropped + %d kept != %d read", rep.DroppedTotal(), rep.Kept, rep.Read)
	}

	var text bytes.Buffer
	if err := rep.Write(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"read 18 records, kept 9 jobs, dropped 9\n",
		"kept submit times 100 to 450 s in the trace, shifted by -100 s\n",
		"nb_res 8 (header MaxProcs), 9 profiles\n",
		"largest job: 8, 10 processors on 3 hosts\n",
		"dropped 2 partial-execution: ",
		"dropped 1 cancelled-before-start: ",
		"dropped 1 after-to: ",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("report text lacks %q:\n%s", want, text.String())
		}
	}
	if n := strings.Count(text.String(), "\ndropped "); n != len(wantReport.Dropped) {
		t.Errorf("report text has %d drop lines, want %d:\n%s", n, len(wantReport.Dropped), text.String())
	}
}

func TestConvertFixtureBatsimConvention(t *testing.T) {
	tr, err := Read(strings.NewReader(fixture))
	if err != nil {
		t.Fatal(err)
	}
	w, rep, err := Convert(tr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if w.NbRes != 32 || rep.NbResFrom != "header MaxProcs" {
		t.Errorf("nb_res %d from %s, want 32 from the header's MaxProcs", w.NbRes, rep.NbResFrom)
	}
	if len(w.Jobs) != 11 || w.Jobs[0].ID != 1 || w.Jobs[0].Subtime != 0 {
		t.Fatalf("jobs %+v: want 11, job 1 first at 0", w.Jobs)
	}
	res := map[int]int{}
	for _, j := range w.Jobs {
		res[j.ID] = j.Res
		if p := w.Profiles[j.Profile]; p.CPU != 0 || p.Memory != "" {
			t.Errorf("job %d: profile %+v carries requests without CoresPerHost", j.ID, p)
		}
	}
	if want := map[int]int{1: 2, 2: 4, 16: 1, 3: 1, 17: 2, 5: 8, 6: 3, 7: 6, 8: 10, 9: 4, 13: 1}; !reflect.DeepEqual(res, want) {
		t.Errorf("res by job: got %v, want %v", res, want)
	}
	if p, ok := w.Profiles["d120"]; !ok || p != (Profile{Type: "delay", Delay: 120}) {
		t.Errorf("profile d120: %+v, %v", p, ok)
	}
	// Job 14 (40 processors) exceeds 32 hosts of one processor.
	if rep.Dropped[ReasonBiggerThanPlatform] != 1 {
		t.Errorf("dropped %v: want job 14 bigger than the platform", rep.Dropped)
	}
}

func TestConvertDeterministic(t *testing.T) {
	var outs [2][]byte
	for i := range outs {
		tr, err := Read(strings.NewReader(fixture))
		if err != nil {
			t.Fatal(err)
		}
		w, _, err := Convert(tr, Options{CoresPerHost: 4, MemoryFromUsed: true})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := w.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		outs[i] = buf.Bytes()
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Fatalf("two conversions differ:\n%s\n---\n%s", outs[0], outs[1])
	}
	// WriteJSON's output is the workload, as encoding/json sees it.
	var fromWrite, fromMarshal any
	if err := json.Unmarshal(outs[0], &fromWrite); err != nil {
		t.Fatalf("WriteJSON wrote invalid JSON: %v\n%s", err, outs[0])
	}
	tr, _ := Read(strings.NewReader(fixture))
	w, _, _ := Convert(tr, Options{CoresPerHost: 4, MemoryFromUsed: true})
	raw, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(raw, &fromMarshal)
	if !reflect.DeepEqual(fromWrite, fromMarshal) {
		t.Errorf("WriteJSON and json.Marshal disagree:\n%s\n%s", outs[0], raw)
	}
	// MemoryFromUsed: job 5's used memory, 2048 KB x 4 cores = 8 Mi.
	if !bytes.Contains(outs[0], []byte(`"d45_c4_m8Mi": {"type":"delay","delay":45,"cpu":4,"memory":"8Mi"}`)) {
		t.Errorf("no memory from used memory for job 5:\n%s", outs[0])
	}
}

// line makes a job line from its non-default fields (the others -1).
func line(fields map[int]string) string {
	f := make([]string, NumFields)
	for i := range f {
		f[i] = "-1"
	}
	for i, v := range fields {
		f[i-1] = v
	}
	return strings.Join(f, " ")
}

// job is a completed job: number, submit time, run time, processors and
// requested time.
func job(n, submit, run, procs, req string) string {
	return line(map[int]string{1: n, 2: submit, 4: run, 5: procs, 8: procs, 9: req, 11: "1"})
}

func TestConvertRules(t *testing.T) {
	failed := line(map[int]string{1: "1", 2: "0", 4: "10", 5: "1", 11: "0"})
	cancelledRan := line(map[int]string{1: "2", 2: "5", 4: "10", 5: "1", 11: "5"})
	cancelledZero := line(map[int]string{1: "3", 2: "5", 4: "0", 5: "1", 11: "5"})
	partial := line(map[int]string{1: "4", 2: "5", 4: "10", 5: "1", 11: "4"})
	otherStatus := line(map[int]string{1: "5", 2: "6", 4: "10", 5: "1", 11: "7"})
	negativeSubmit := line(map[int]string{1: "6", 2: "-1", 4: "10", 5: "1", 11: "1"})
	unknownRun := line(map[int]string{1: "7", 2: "1", 5: "1", 11: "1"})
	allocOnly := line(map[int]string{1: "8", 2: "1", 4: "10", 5: "6", 8: "2", 11: "1"})
	mixed := strings.Join([]string{failed, cancelledRan, cancelledZero, partial, otherStatus, negativeSubmit, unknownRun}, "\n")

	tests := []struct {
		name        string
		trace       string
		opts        Options
		wantIDs     []int
		wantDropped map[string]int
		check       func(t *testing.T, w Workload, rep Report)
	}{
		{
			name: "defaults keep failed and cancelled-after-start jobs", trace: mixed,
			wantIDs: []int{1, 2, 5},
			wantDropped: map[string]int{ReasonCancelledBeforeStart: 1, ReasonPartialExecution: 1,
				ReasonUnknownSubmitTime: 1, ReasonUnknownRunTime: 1},
		},
		{
			name: "drop failed and cancelled", trace: mixed, opts: Options{DropFailed: true, DropCancelled: true},
			wantIDs: []int{5},
			wantDropped: map[string]int{ReasonFailed: 1, ReasonCancelled: 1, ReasonCancelledBeforeStart: 1,
				ReasonPartialExecution: 1, ReasonUnknownSubmitTime: 1, ReasonUnknownRunTime: 1},
		},
		{
			name: "walltime max with a factor", trace: job("1", "0", "100", "1", "150") + "\n" + job("2", "0", "100", "1", "500"),
			opts: Options{WalltimeFactor: 3}, wantIDs: []int{1, 2}, wantDropped: map[string]int{},
			check: func(t *testing.T, w Workload, _ Report) {
				if w.Jobs[0].Walltime != 300 || w.Jobs[1].Walltime != 500 {
					t.Errorf("walltimes %v and %v, want 300 and 500", w.Jobs[0].Walltime, w.Jobs[1].Walltime)
				}
			},
		},
		{
			name:  "walltime max with a factor of 1 drops jobs whose request is too short",
			trace: job("1", "0", "100", "1", "100") + "\n" + job("2", "0", "100", "1", "101"),
			opts:  Options{WalltimeFactor: 1}, wantIDs: []int{2}, wantDropped: map[string]int{ReasonWalltimeTooShort: 1},
		},
		{
			name:  "walltime requested",
			trace: job("1", "0", "100", "1", "150") + "\n" + job("2", "1", "100", "1", "-1") + "\n" + job("3", "2", "100", "1", "90"),
			opts:  Options{Walltime: WalltimeRequested}, wantIDs: []int{1, 2}, wantDropped: map[string]int{ReasonWalltimeTooShort: 1},
			check: func(t *testing.T, w Workload, _ Report) {
				if w.Jobs[0].Walltime != 150 || w.Jobs[1].Walltime != 0 {
					t.Errorf("walltimes %v and %v, want 150 and none", w.Jobs[0].Walltime, w.Jobs[1].Walltime)
				}
			},
		},
		{
			name: "walltime none", trace: job("1", "0", "100", "1", "50"), opts: Options{Walltime: WalltimeNone},
			wantIDs: []int{1}, wantDropped: map[string]int{},
			check: func(t *testing.T, w Workload, _ Report) {
				var buf bytes.Buffer
				w.WriteJSON(&buf)
				if w.Jobs[0].Walltime != 0 || strings.Contains(buf.String(), "walltime") {
					t.Errorf("a walltime was written:\n%s", buf.String())
				}
			},
		},
		{
			name: "requested processors first", trace: allocOnly, wantIDs: []int{8}, wantDropped: map[string]int{},
			check: func(t *testing.T, w Workload, _ Report) {
				if w.Jobs[0].Res != 2 || w.NbRes != 2 {
					t.Errorf("res %d, nb_res %d, want 2 and 2", w.Jobs[0].Res, w.NbRes)
				}
			},
		},
		{
			name: "allocated processors first", trace: allocOnly, opts: Options{Processors: ProcessorsAllocated},
			wantIDs: []int{8}, wantDropped: map[string]int{},
			check: func(t *testing.T, w Workload, _ Report) {
				if w.Jobs[0].Res != 6 {
					t.Errorf("res %d, want 6", w.Jobs[0].Res)
				}
			},
		},
		{
			name:  "max jobs and absolute times",
			trace: job("3", "30", "10", "1", "-1") + "\n" + job("1", "10", "10", "1", "-1") + "\n" + job("2", "20", "10", "1", "-1"),
			opts:  Options{MaxJobs: 2, KeepAbsoluteTimes: true}, wantIDs: []int{1, 2},
			wantDropped: map[string]int{ReasonBeyondMaxJobs: 1},
			check: func(t *testing.T, w Workload, rep Report) {
				if w.Jobs[0].Subtime != 10 || w.Jobs[1].Subtime != 20 || rep.Shift != 0 {
					t.Errorf("subtimes %v, %v shift %v: want the trace's 10 and 20", w.Jobs[0].Subtime, w.Jobs[1].Subtime, rep.Shift)
				}
			},
		},
		{
			name:  "window then limit",
			trace: job("1", "10", "10", "1", "-1") + "\n" + job("2", "20", "10", "1", "-1") + "\n" + job("3", "30", "10", "1", "-1") + "\n" + job("4", "40", "10", "1", "-1"),
			opts:  Options{From: 15, To: 40, MaxJobs: 1}, wantIDs: []int{2},
			wantDropped: map[string]int{ReasonBeforeFrom: 1, ReasonAfterTo: 1, ReasonBeyondMaxJobs: 1},
			check: func(t *testing.T, w Workload, rep Report) {
				if w.Jobs[0].Subtime != 0 || rep.FirstSubmit != 20 || rep.LastSubmit != 20 {
					t.Errorf("subtime %v, window %v-%v: want 0 and 20-20", w.Jobs[0].Subtime, rep.FirstSubmit, rep.LastSubmit)
				}
			},
		},
		{
			name:  "nb_res option drops bigger jobs",
			trace: "; MaxProcs: 100\n" + job("1", "0", "10", "8", "-1") + "\n" + job("2", "0", "10", "9", "-1"),
			opts:  Options{NbRes: 2, CoresPerHost: 4}, wantIDs: []int{1}, wantDropped: map[string]int{ReasonBiggerThanPlatform: 1},
			check: func(t *testing.T, w Workload, rep Report) {
				if w.NbRes != 2 || rep.NbResFrom != "option" {
					t.Errorf("nb_res %d from %s, want 2 from the option", w.NbRes, rep.NbResFrom)
				}
			},
		},
		{
			name:  "nb_res from MaxNodes",
			trace: "; MaxNodes: 10\n" + job("1", "0", "10", "8", "-1"),
			opts:  Options{CoresPerHost: 4}, wantIDs: []int{1}, wantDropped: map[string]int{},
			check: func(t *testing.T, w Workload, rep Report) {
				if w.NbRes != 3 || rep.NbResFrom != "header MaxNodes" {
					t.Errorf("nb_res %d from %s, want ceil(10/4) = 3 from MaxNodes", w.NbRes, rep.NbResFrom)
				}
			},
		},
		{
			name:  "nb_res from the biggest job",
			trace: "; MaxProcs: unknown\n" + job("1", "0", "10", "9", "-1") + "\n" + job("2", "0", "10", "3", "-1"),
			opts:  Options{CoresPerHost: 4}, wantIDs: []int{1, 2}, wantDropped: map[string]int{},
			check: func(t *testing.T, w Workload, rep Report) {
				if w.NbRes != 3 || rep.NbResFrom != "biggest job" || rep.Largest != (LargestJob{JobNumber: 1, Processors: 9, Hosts: 3}) {
					t.Errorf("nb_res %d from %s, largest %+v: want 3 from job 1 (9 processors)", w.NbRes, rep.NbResFrom, rep.Largest)
				}
				if w.Jobs[0].Res != 3 || w.Profiles[w.Jobs[0].Profile].CPU != 3 {
					t.Errorf("job 1: res %d cpu %d, want 3 hosts of 3 cores", w.Jobs[0].Res, w.Profiles[w.Jobs[0].Profile].CPU)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := Read(strings.NewReader(tt.trace))
			if err != nil {
				t.Fatal(err)
			}
			w, rep, err := Convert(tr, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var ids []int
			for _, j := range w.Jobs {
				ids = append(ids, j.ID)
			}
			if !reflect.DeepEqual(ids, tt.wantIDs) {
				t.Errorf("kept jobs %v, want %v", ids, tt.wantIDs)
			}
			if !reflect.DeepEqual(rep.Dropped, tt.wantDropped) {
				t.Errorf("dropped %v, want %v", rep.Dropped, tt.wantDropped)
			}
			if rep.Kept+rep.DroppedTotal() != rep.Read {
				t.Errorf("%d kept + %d dropped != %d read", rep.Kept, rep.DroppedTotal(), rep.Read)
			}
			if tt.check != nil {
				tt.check(t, w, rep)
			}
		})
	}
}

func TestHostsAndCores(t *testing.T) {
	tests := []struct {
		procs, cores, wantRes, wantCPU int
	}{
		{1, 4, 1, 1}, {4, 4, 1, 4}, {5, 4, 2, 3}, {10, 4, 3, 4}, {16, 4, 4, 4}, {17, 4, 5, 4},
		{7, 1, 7, 1}, {128, 48, 3, 43}, {3, 64, 1, 3},
	}
	for _, tt := range tests {
		tr, err := Read(strings.NewReader(job("1", "0", "10", itoa(tt.procs), "-1")))
		if err != nil {
			t.Fatal(err)
		}
		w, _, err := Convert(tr, Options{CoresPerHost: tt.cores})
		if err != nil {
			t.Fatal(err)
		}
		j := w.Jobs[0]
		cpu := w.Profiles[j.Profile].CPU
		if j.Res != tt.wantRes || cpu != tt.wantCPU {
			t.Errorf("%d processors on %d-core hosts: res %d cpu %d, want %d and %d", tt.procs, tt.cores, j.Res, cpu, tt.wantRes, tt.wantCPU)
		}
		if cpu > tt.cores || cpu*j.Res < tt.procs {
			t.Errorf("%d processors on %d-core hosts: %d pods of %d cores do not fit or do not cover", tt.procs, tt.cores, j.Res, cpu)
		}
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestConvertErrors(t *testing.T) {
	tr, err := Read(strings.NewReader(job("1", "0", "10", "1", "-1")))
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{
		{CoresPerHost: -1}, {WalltimeFactor: -2}, {MaxJobs: -1}, {NbRes: -3}, {From: 10, To: 5},
		{Walltime: "sometimes"}, {Processors: "both"},
	} {
		if _, _, err := Convert(tr, opts); err == nil {
			t.Errorf("Convert with %+v succeeded", opts)
		}
	}
	empty, _ := Read(strings.NewReader("; only a header\n" + line(map[int]string{1: "1", 2: "0", 4: "0", 5: "1", 11: "5"})))
	_, rep, err := Convert(empty, Options{})
	if !errors.Is(err, ErrNoJobs) || !strings.Contains(err.Error(), "cancelled-before-start: 1") {
		t.Errorf("error %v, want ErrNoJobs with the drop counts", err)
	}
	if rep.Read != 1 || rep.Dropped[ReasonCancelledBeforeStart] != 1 {
		t.Errorf("report %+v, want the dropped record counted", rep)
	}
	if _, _, err := Convert(nil, Options{}); err == nil {
		t.Error("Convert(nil) succeeded")
	}
}

func TestConvertMemory(t *testing.T) {
	tests := []struct {
		requested, used string
		fromUsed        bool
		want            string
	}{
		{"1024", "-1", false, "4Mi"}, // 1 Mi per processor, 4 per pod
		{"1000", "-1", false, "4Mi"}, // 3.9 Mi rounded up
		{"-1", "2048", false, ""},
		{"-1", "2048", true, "8Mi"},
		{"0", "0", true, ""},
		{"1e300", "-1", false, ""}, // not a real request
	}
	for _, tt := range tests {
		tr, err := Read(strings.NewReader(line(map[int]string{1: "1", 2: "0", 4: "10", 5: "4", 7: tt.used, 10: tt.requested, 11: "1"})))
		if err != nil {
			t.Fatal(err)
		}
		w, _, err := Convert(tr, Options{CoresPerHost: 4, MemoryFromUsed: tt.fromUsed})
		if err != nil {
			t.Fatal(err)
		}
		if got := w.Profiles[w.Jobs[0].Profile].Memory; got != tt.want {
			t.Errorf("requested %s KB, used %s KB (from used: %v): memory %q, want %q", tt.requested, tt.used, tt.fromUsed, got, tt.want)
		}
	}
}
