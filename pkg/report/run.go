package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/batkube/batkube/pkg/engine"
	"github.com/batkube/batkube/pkg/launch"
	"github.com/batkube/batkube/pkg/outputs"
	"github.com/batkube/batkube/pkg/translate"
)

// Inputs are what a run was made of, beyond its output folder: the
// platform gives the nodes' names and allocatable resources, the workloads
// the jobs' requests. Both are optional: without them the report leaves
// out what needs them (utilisation) and names nodes after their resource
// ids when _pods.csv is missing.
type Inputs struct {
	Platform string
	// MasterHost is the platform's master host, if not master_host (the
	// run's -m).
	MasterHost string
	Workloads  []string // in the run's order: Batsim names them w0, w1...
	// Nodes are the defaults of hosts that do not give their cpu or memory
	// (kubernetes-server's --node-default-cpu and --node-default-memory).
	Nodes translate.NodeOptions
}

// DefaultNodeOptions are kubernetes-server's defaults for hosts without a
// cpu or memory property.
func DefaultNodeOptions() translate.NodeOptions {
	return translate.NodeOptions{DefaultCPU: resource.MustParse("1"), DefaultMemory: resource.MustParse("16Gi")}
}

// Run is what a run's output folder tells.
type Run struct {
	// Name tells the run apart in the report's files and elements: the
	// folder's name (made unique by New).
	Name string
	// Label is what the page and the charts call the run: given (e.g.
	// batkube-report's LABEL=DIR), or else made short by New (labelRuns).
	Label string
	Dir   string
	// Origin is the campaign's run.json of a run of a campaign (nil for
	// another run).
	Origin *Origin
	// Summary is the runner's summary.json, nil when the folder has none.
	Summary *launch.Summary
	// Controllers are _controllers.csv's rows (nil without the file: a
	// run without kube-controller-manager).
	Controllers []map[string]string
	// Workloads are _workloads.csv's rows (nil without the file: a run
	// without Kueue).
	Workloads []map[string]string
	// LaunchedNodes are _nodes.csv's rows (nil without the file: a run
	// without Karpenter): the nodes it launched.
	LaunchedNodes []map[string]string
	// Queues are the Jobs' waits from their creation, in all and in
	// Kueue's queues (nil without Jobs); ClusterQueues the samples of
	// _clusterqueues.csv (nil without the file).
	Queues        *outputs.Queues
	ClusterQueues []outputs.ClusterQueueSample
	workloads     []outputs.Workload
	launched      []outputs.Node
	// Jobs are _jobs.csv's rows, Pods _pods.csv's (nil without the file).
	Jobs []Job
	Pods []Pod
	// Nodes are the platform's compute resources in resource-id order (nil
	// without the platform).
	Nodes []Node
	// HasRequests says whether the workloads were read, Unknown counts the
	// jobs whose requests they do not give (dynamic jobs).
	HasRequests bool
	Unknown     int
	// Notes say what the report could not show and why.
	Notes []string
}

// Job is a row of _jobs.csv. Times are simulated seconds.
type Job struct {
	ID       string // "workload!id", as the protocol and _pods.csv name it
	Profile  string
	State    string // final_state
	Res      int
	Submit   float64
	Started  bool // false for rejected jobs
	Start    float64
	Finish   float64
	Resource []int // allocated_resources
	// Request is what all the job's pods ask for (from the workload).
	Request Request
}

// Waiting is the time the job waited before it started.
func (j Job) Waiting() float64 { return j.Start - j.Submit }

// Slowdown is the job's turnaround over its execution time (Batsim's
// stretch); 0 for a job that ran for no time.
func (j Job) Slowdown() float64 {
	if j.Finish <= j.Start {
		return 0
	}
	return (j.Finish - j.Submit) / (j.Finish - j.Start)
}

// Request is an amount of cpu (cores) and memory (bytes).
type Request struct{ CPU, Memory float64 }

// Pod is a row of _pods.csv; absent instants are NaN.
type Pod struct {
	JobID, Name, Node string
	Created, Started  float64
	Finished          float64
	Phase, Reason     string
}

// Node is a compute resource of the platform with what it offers.
type Node struct {
	Name        string
	Allocatable Request
}

// runInputs is what summary.json may say of the run's inputs beyond
// launch.Summary (see Load).
type runInputs struct {
	Platform   string   `json:"platform"`
	MasterHost string   `json:"masterHost"`
	Workloads  []string `json:"workloads"`
}

// LoadAll loads the runs of dirs, in order (Load).
func LoadAll(dirs []string, in Inputs) ([]*Run, error) {
	runs := make([]*Run, 0, len(dirs))
	for _, dir := range dirs {
		r, err := Load(dir, in)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// Load reads a run's output folder. The platform and workloads are those of
// in when set, else those summary.json names (fields "platform" and
// "workloads"), if any.
func Load(dir string, in Inputs) (*Run, error) {
	r := &Run{Name: filepath.Base(filepath.Clean(dir)), Dir: dir}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("report: %s is not a run's output folder", dir)
	}
	if err := r.readSummary(&in); err != nil {
		return nil, err
	}
	if err := r.readOrigin(); err != nil {
		return nil, err
	}
	if err := r.readJobs(); err != nil {
		return nil, err
	}
	if err := r.readPods(); err != nil {
		return nil, err
	}
	if err := r.readControllers(); err != nil {
		return nil, err
	}
	if in.Nodes.DefaultCPU.IsZero() && in.Nodes.DefaultMemory.IsZero() {
		in.Nodes = DefaultNodeOptions()
	}
	if in.Platform == "" {
		r.Notes = append(r.Notes, "no platform given (-p, or \"platform\" in summary.json): no utilisation, nodes named from _pods.csv")
	} else if err := r.readPlatform(in.Platform, in.MasterHost, in.Nodes); err != nil {
		return nil, err
	}
	if len(in.Workloads) == 0 {
		r.Notes = append(r.Notes, "no workload given (-w, or \"workloads\" in summary.json): the jobs' requests are unknown, no utilisation")
	} else if err := r.readRequests(in.Workloads); err != nil {
		return nil, err
	}
	if r.Unknown > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d jobs are not in the workloads (dynamic jobs): their requests count as 0 in the utilisation chart, and the run has no utilisation figure", r.Unknown))
	}
	return r, nil
}

func (r *Run) readSummary(in *Inputs) error {
	data, err := os.ReadFile(filepath.Join(r.Dir, "summary.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var s launch.Summary
	var inputs runInputs
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("report: %s/summary.json: %w", r.Dir, err)
	}
	if err := json.Unmarshal(data, &inputs); err != nil {
		return fmt.Errorf("report: %s/summary.json: %w", r.Dir, err)
	}
	r.Summary = &s
	if in.Platform == "" {
		in.Platform, in.MasterHost = inputs.Platform, inputs.MasterHost
	}
	if len(in.Workloads) == 0 {
		in.Workloads = inputs.Workloads
	}
	return nil
}

func (r *Run) readJobs() error {
	path := filepath.Join(r.Dir, "_jobs.csv")
	rows, err := outputs.ReadCSV(path)
	if err != nil {
		return err
	}
	for i, row := range rows {
		j, err := parseJob(row)
		if err != nil {
			return fmt.Errorf("report: %s: row %d: %w", path, i+2, err)
		}
		r.Jobs = append(r.Jobs, j)
	}
	// Jobs in submission order, then by id, whatever order they ended in.
	sort.SliceStable(r.Jobs, func(a, b int) bool {
		if r.Jobs[a].Submit != r.Jobs[b].Submit {
			return r.Jobs[a].Submit < r.Jobs[b].Submit
		}
		return r.Jobs[a].ID < r.Jobs[b].ID
	})
	return nil
}

func parseJob(row map[string]string) (Job, error) {
	j := Job{ID: row["workload_name"] + "!" + row["job_id"], Profile: row["profile"], State: row["final_state"]}
	if row["job_id"] == "" || row["workload_name"] == "" || j.State == "" {
		return j, errors.New("job_id, workload_name or final_state is empty")
	}
	var err error
	if j.Submit, err = number(row, "submission_time"); err != nil {
		return j, err
	}
	res, err := number(row, "requested_number_of_resources")
	if err != nil {
		return j, err
	}
	j.Res = int(res)
	if j.State == "REJECTED" || row["starting_time"] == "" {
		return j, nil
	}
	j.Started = true
	if j.Start, err = number(row, "starting_time"); err != nil {
		return j, err
	}
	if j.Finish, err = number(row, "finish_time"); err != nil {
		return j, err
	}
	if j.Resource, err = parseIDs(row["allocated_resources"]); err != nil {
		return j, fmt.Errorf("allocated_resources: %w", err)
	}
	return j, nil
}

func number(row map[string]string, col string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(row[col]), 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", col, err)
	}
	return v, nil
}

// parseIDs reads Batsim's interval set notation: "0-3 7 9-10".
func parseIDs(s string) ([]int, error) {
	var ids []int
	for _, part := range strings.Fields(s) {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("%q: bad interval %q", s, part)
			}
		}
		for id := a; id <= b; id++ {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// readControllers reads _controllers.csv, _workloads.csv, _nodes.csv and
// _clusterqueues.csv, if the run wrote them.
func (r *Run) readControllers() error {
	for file, rows := range map[string]*[]map[string]string{"_controllers.csv": &r.Controllers, "_workloads.csv": &r.Workloads, "_nodes.csv": &r.LaunchedNodes} {
		read, err := outputs.ReadCSV(filepath.Join(r.Dir, file))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		*rows = read
	}
	var controllers []outputs.Controller
	if r.Controllers != nil {
		var err error
		if controllers, err = outputs.ReadControllers(filepath.Join(r.Dir, "_controllers.csv")); err != nil {
			return err
		}
	}
	if r.Workloads != nil {
		var err error
		if r.workloads, err = outputs.ReadWorkloads(filepath.Join(r.Dir, "_workloads.csv")); err != nil {
			return err
		}
	}
	if r.LaunchedNodes != nil {
		var err error
		if r.launched, err = outputs.ReadNodes(filepath.Join(r.Dir, "_nodes.csv")); err != nil {
			return err
		}
	}
	if q := outputs.SummariseQueues(controllers, r.workloads); q.Jobs.Count > 0 || len(q.ClusterQueues) > 0 {
		r.Queues = &q
	}
	samples, err := outputs.ReadClusterQueues(filepath.Join(r.Dir, "_clusterqueues.csv"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	r.ClusterQueues = samples
	return nil
}

// QueueRow is a line of a run's table of Kueue's queues.
type QueueRow struct {
	ClusterQueue string
	// Admission are the Workloads' times to admission, Jobs the Jobs'
	// waits (creation to first pod start).
	Admission, Jobs outputs.Waits
	// Usage is the cpu its admitted Workloads used, over the run
	// (HasUsage false without _clusterqueues.csv).
	Usage    outputs.QueueUsage
	HasUsage bool
}

// QueueRows is the run's table of Kueue's queues, by ClusterQueue (nil
// without Kueue).
func (r *Run) QueueRows() []QueueRow {
	if r.Queues == nil || len(r.Queues.ClusterQueues) == 0 {
		return nil
	}
	jobs := map[string]outputs.Waits{}
	for _, q := range r.Queues.JobsByClusterQueue {
		jobs[q.Queue] = q.Waits
	}
	usage := map[string]outputs.QueueUsage{}
	if len(r.ClusterQueues) > 0 {
		for _, u := range outputs.AverageUsage(r.ClusterQueues, "cpu", 0, max(r.Figures().Makespan, r.ClusterQueues[len(r.ClusterQueues)-1].Time)) {
			usage[u.ClusterQueue] = u
		}
	}
	rows := make([]QueueRow, 0, len(r.Queues.ClusterQueues))
	for _, q := range r.Queues.ClusterQueues {
		u, ok := usage[q.Queue]
		rows = append(rows, QueueRow{ClusterQueue: q.Queue, Admission: q.Waits, Jobs: jobs[q.Queue], Usage: u, HasUsage: ok})
	}
	return rows
}

// ManyRows is how many rows of a per-object table the page shows; a run
// with more has them in its CSV file only.
const ManyRows = 25

func (r *Run) readPods() error {
	path := filepath.Join(r.Dir, "_pods.csv")
	rows, err := outputs.ReadCSV(path)
	if errors.Is(err, fs.ErrNotExist) {
		r.Notes = append(r.Notes, "no _pods.csv: the Gantt chart places jobs by Batsim's allocated resources")
		return nil
	}
	if err != nil {
		return err
	}
	r.Pods = make([]Pod, 0, len(rows))
	for i, row := range rows {
		p := Pod{JobID: row["job_id"], Name: row["pod"], Node: row["node"], Phase: row["phase"], Reason: row["reason"]}
		for col, v := range map[string]*float64{"created": &p.Created, "started": &p.Started, "finished": &p.Finished} {
			*v = math.NaN()
			if row[col] == "" {
				continue
			}
			if *v, err = number(row, col); err != nil {
				return fmt.Errorf("report: %s: row %d: %w", path, i+2, err)
			}
		}
		r.Pods = append(r.Pods, p)
	}
	return nil
}

func (r *Run) readPlatform(path, masterHost string, opts translate.NodeOptions) error {
	p, err := engine.ReadPlatformFileWith(path, engine.PlatformOptions{MasterHost: masterHost})
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	hosts := make([]translate.Host, len(p.Resources))
	for i, res := range p.Resources {
		hosts[i] = translate.Host{ID: res.ID, Name: res.Name, Properties: res.Properties, ZoneProperties: res.ZoneProperties}
	}
	nodes, err := translate.Nodes(hosts, opts)
	if err != nil {
		return fmt.Errorf("report: platform %s: %w", path, err)
	}
	for _, n := range nodes {
		r.Nodes = append(r.Nodes, Node{Name: n.Name, Allocatable: requestOf(n.Status.Allocatable)})
	}
	return nil
}

// readRequests gives each job what its pods ask for, as the broker makes
// them: translate.Pods of the job and its profile. A job not in the
// workloads (a resubmitted or dynamic job) takes its profile's requests
// when the workload has the profile.
func (r *Run) readRequests(paths []string) error {
	byJob := map[string]Request{}     // per pod, by job id
	byProfile := map[string]Request{} // per pod, by "workload!profile"
	for i, path := range paths {
		w, err := engine.ReadWorkloadFile(path, engine.BatsimWorkloadName(i))
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		for name, p := range w.Profiles {
			req, err := podRequest(translate.Job{ID: w.Name + "!profile", Profile: rawFields(p.Raw)})
			if err != nil {
				return fmt.Errorf("report: workload %s: profile %s: %w", path, name, err)
			}
			byProfile[w.Name+"!"+name] = req
		}
		for _, j := range w.Jobs {
			prof := w.Profiles[j.Profile]
			req, err := podRequest(translate.Job{ID: j.ID, Res: j.Res, Walltime: j.Walltime, Fields: rawFields(j.Raw), Profile: rawFields(prof.Raw)})
			if err != nil {
				return fmt.Errorf("report: workload %s: %w", path, err)
			}
			byJob[j.ID] = req
		}
	}
	r.HasRequests = true
	for i := range r.Jobs {
		j := &r.Jobs[i]
		req, ok := byJob[j.ID]
		if !ok {
			workload, _, _ := strings.Cut(j.ID, "!")
			req, ok = byProfile[workload+"!"+j.Profile]
		}
		if !ok {
			r.Unknown++
			continue
		}
		n := float64(max(j.Res, 1))
		j.Request = Request{CPU: req.CPU * n, Memory: req.Memory * n}
	}
	return nil
}

// podRequest is what one pod of the job asks for.
func podRequest(job translate.Job) (Request, error) {
	pods, err := translate.Pods(job, translate.PodOptions{})
	if err != nil {
		return Request{}, err
	}
	spec := pods[0].Spec
	var sum Request
	for _, c := range spec.Containers {
		r := requestOf(c.Resources.Requests)
		sum.CPU += r.CPU
		sum.Memory += r.Memory
	}
	for _, c := range spec.InitContainers { // init containers run before the others
		r := requestOf(c.Resources.Requests)
		sum.CPU, sum.Memory = max(sum.CPU, r.CPU), max(sum.Memory, r.Memory)
	}
	return sum, nil
}

func requestOf(l corev1.ResourceList) Request {
	return Request{CPU: l.Cpu().AsApproximateFloat64(), Memory: l.Memory().AsApproximateFloat64()}
}

func rawFields(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m) // the engine has parsed it as an object already
	return m
}
