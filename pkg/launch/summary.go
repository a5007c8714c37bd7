package launch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/batkube/batkube/pkg/atomicfile"

	"github.com/batkube/batkube/pkg/broker"
	"github.com/batkube/batkube/pkg/metrics"
	"github.com/batkube/batkube/pkg/outputs"
	"github.com/batkube/batkube/pkg/settle"
)

// Summary is the outcome of a run, read from Batsim's output files (so it is
// the same with real Batsim and with the embedded engine) and from the
// processes' resource usage.
type Summary struct {
	OutDir string `json:"outDir"`
	Engine string `json:"engine"` // "embedded" or the path of the batsim binary
	// Status is StatusSucceeded when the simulation ran to its end and its
	// outputs were read, StatusFailed otherwise, with Error saying why.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// Platform and Workloads are the run's inputs (absolute paths), so
	// that a report of the folder finds them.
	Platform   string   `json:"platform"`
	MasterHost string   `json:"masterHost,omitempty"`
	Workloads  []string `json:"workloads"`
	// Jobs counts the rows of _jobs.csv; the others count them by final state.
	Jobs            int `json:"jobs"`
	Succeeded       int `json:"succeeded"`
	Failed          int `json:"failed"`
	WalltimeReached int `json:"walltimeReached"`
	Killed          int `json:"killed"`
	Rejected        int `json:"rejected"`
	// Makespan and MeanWaitingTime are _schedule.csv's, in simulated seconds.
	Makespan        float64 `json:"makespanSeconds"`
	MeanWaitingTime float64 `json:"meanWaitingTimeSeconds"`
	// Energy is what Batsim run with --energy says of it (_schedule.csv),
	// absent otherwise.
	Energy *Energy `json:"energy,omitempty"`
	// Wall is the wall-clock time of the whole run, SpeedUp the makespan
	// over it.
	Wall    time.Duration `json:"wallNanoseconds"`
	SpeedUp float64       `json:"speedUp"`
	// SimulationWall is the wall-clock time of the simulation proper, from
	// Batsim's start to its end (_schedule.csv's simulation_time), and
	// SchedulingWall the part of it Batsim waited for the decision process
	// (scheduling_time): the run's wall time less the start-up of the
	// server and the scheduler.
	SimulationWall time.Duration `json:"simulationWallNanoseconds"`
	SchedulingWall time.Duration `json:"schedulingWallNanoseconds"`
	// Processes lists the CPU time and peak memory of each process.
	Processes []ProcessUsage `json:"processes"`
	// Steps counts the messages the server answered; Settle counts them by
	// how the wait for the scheduler ended (which policy, how many exact);
	// AdmissionRejected the pods the kubelet refused (over-committed
	// nodes). From the server's statistics.
	Steps             int          `json:"steps"`
	Settle            settle.Stats `json:"settle"`
	AdmissionRejected int          `json:"admissionRejected"`
	// Preempted counts the jobs killed because the scheduler preempted one
	// of their pods, Resubmitted those submitted again (--preempted).
	Preempted   int `json:"preempted"`
	Resubmitted int `json:"resubmitted"`
	// KubeScheduler is what the run's kube-scheduler's own metrics say
	// (kube-scheduler-metrics.txt); absent for other schedulers.
	KubeScheduler *metrics.SchedulerSummary `json:"kubeScheduler,omitempty"`
	// Queues are the waits of the run's batch/v1 Jobs, from each Job's
	// creation, in all and in Kueue's queues (_controllers.csv,
	// _workloads.csv); absent without Jobs.
	Queues *outputs.Queues `json:"queues,omitempty"`
	// Nodes sums up the nodes Karpenter launched (_nodes.csv); absent
	// without it.
	Nodes *outputs.NodesSummary `json:"nodes,omitempty"`
}

// Values of Summary.Status.
const (
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// SimulationSpeedUp is the makespan over the wall time of the simulation
// proper.
func (s Summary) SimulationSpeedUp() float64 {
	if s.SimulationWall <= 0 {
		return 0
	}
	return s.Makespan / s.SimulationWall.Seconds()
}

// ProcessUsage is what a process of the run consumed.
type ProcessUsage struct {
	Name   string        `json:"name"`
	CPU    time.Duration `json:"cpuNanoseconds"`
	MaxRSS int64         `json:"maxRSSBytes"`
}

// Usage returns the usage of the named process (zero if it did not run).
func (s Summary) Usage(name string) ProcessUsage {
	for _, p := range s.Processes {
		if p.Name == name {
			return p
		}
	}
	return ProcessUsage{Name: name}
}

// Energy is _schedule.csv's energy and power-state columns: the joules
// consumed from the first job's submission to the last job's end, and
// the machines' seconds asleep and switching, summed over machines up to
// each one's last change of state (Batsim's accounting).
type Energy struct {
	Joules        float64 `json:"consumedJoules"`
	Sleeping      float64 `json:"sleepingSeconds"`
	SwitchingOff  float64 `json:"switchingOffSeconds"`
	SwitchingOn   float64 `json:"switchingOnSeconds"`
	MachineSwitch int     `json:"machineSwitches"`
}

// Write prints the summary for a person.
func (s Summary) Write(w io.Writer) {
	fmt.Fprintf(w, "jobs:          %d (%d succeeded, %d failed, %d reached their walltime, %d killed, %d rejected)\n",
		s.Jobs, s.Succeeded, s.Failed, s.WalltimeReached, s.Killed, s.Rejected)
	fmt.Fprintf(w, "makespan:      %.3f s simulated (%s)\n", s.Makespan, humanSeconds(s.Makespan))
	if s.Queues != nil {
		writeQueues(w, s.Queues)
		fmt.Fprintf(w, "pod waiting:   mean %.3f s simulated (Batsim's waiting time, from each pod's creation)\n", s.MeanWaitingTime)
	} else {
		fmt.Fprintf(w, "mean waiting:  %.3f s simulated\n", s.MeanWaitingTime)
	}
	if e := s.Energy; e != nil {
		fmt.Fprintf(w, "energy:        %.0f J from the first submission to the last job's end; machines asleep %.0f s, switching off %.0f s, on %.0f s (%d switches; Batsim's _schedule.csv)\n",
			e.Joules, e.Sleeping, e.SwitchingOff, e.SwitchingOn, e.MachineSwitch)
	}
	fmt.Fprintf(w, "wall time:     %s (%.0fx real time); the simulation proper %s (%.0fx)\n", s.Wall.Round(time.Millisecond), s.SpeedUp,
		s.SimulationWall.Round(time.Millisecond), s.SimulationSpeedUp())
	for _, p := range s.Processes {
		fmt.Fprintf(w, "  %-16s CPU %8s, peak RSS %4d MiB\n", p.Name, p.CPU.Round(time.Millisecond), p.MaxRSS>>20)
	}
	fmt.Fprintf(w, "settling:      %s; %d steps, %s: %d with nothing pending, %d with the scheduler known idle, %d on the quiet window, %d on settle-max, %d unproven",
		s.Settle.Policy, s.Steps, s.Settle.Verdict(), s.Settle.NothingPending, s.Settle.Idle, s.Settle.Quiet, s.Settle.MaxWait, s.Settle.Unproven)
	if s.Settle.Releases > 0 {
		fmt.Fprintf(w, "; %d pod groups released", s.Settle.Releases)
	}
	if s.Settle.BarrierChecks > 0 {
		fmt.Fprintf(w, "; every step waited for the controllers to be idle (%d checks)", s.Settle.BarrierChecks)
	}
	if s.Settle.TimedPauses > 0 {
		fmt.Fprintf(w, "; at %d instants the scheduling loops' pauses took their own time (--pause-releases)", s.Settle.TimedPauses)
	}
	fmt.Fprintln(w)
	if n := s.Settle.Inexact(); n > 0 {
		fmt.Fprintf(w, "               %d steps ended without knowing the scheduler was done: some jobs may have started later than they could have\n", n)
	}
	if s.Preempted > 0 {
		fmt.Fprintf(w, "preemption:    %d jobs killed because the scheduler preempted their pods, %d submitted again\n", s.Preempted, s.Resubmitted)
	}
	if s.AdmissionRejected > 0 {
		fmt.Fprintf(w, "admission:     %d pods refused by their node's kubelet (bound to a node without room: OutOfcpu...)\n", s.AdmissionRejected)
	}
	if s.KubeScheduler != nil {
		writeKubeScheduler(w, s.KubeScheduler)
	}
	if n := s.Nodes; n != nil {
		fmt.Fprintf(w, "nodes:         %d launched (%d deleted, %d mapped onto no pool host), at most %d at once; %.3f node-hours, cost %.4f (_nodes.csv)\n",
			n.Launched, n.Deleted, n.Unmapped, n.Peak, n.NodeHours, n.Cost)
	}
	fmt.Fprintf(w, "outputs:       %s (_jobs.csv, _schedule.csv, logs)\n", s.OutDir)
}

// maxQueueLines bounds the queues listed in the printed summary (the
// others are in summary.json).
const maxQueueLines = 8

// writeQueues prints the Jobs' waits from their creation, and Kueue's
// times to admission by ClusterQueue.
func writeQueues(w io.Writer, q *outputs.Queues) {
	fmt.Fprintf(w, "job waiting:   %d Jobs, %d started, from each Job's creation to its first pod's start: mean %.3f s, p95 %.3f s simulated\n",
		q.Jobs.Count, q.Jobs.Done, q.Jobs.Mean, q.Jobs.P95)
	if len(q.ClusterQueues) == 0 {
		return
	}
	fmt.Fprintf(w, "kueue:         time from a Job's creation to its Workload's admission, by ClusterQueue (mean, p95):\n")
	for i, cq := range q.ClusterQueues {
		if i == maxQueueLines {
			fmt.Fprintf(w, "                 ... and %d more ClusterQueues (summary.json, _workloads.csv)\n", len(q.ClusterQueues)-i)
			break
		}
		fmt.Fprintf(w, "                 %-20s %5d Workloads, %5d admitted: %9.3f s, %9.3f s\n", cq.Queue, cq.Count, cq.Done, cq.Mean, cq.P95)
	}
	if q.Evictions > 0 {
		fmt.Fprintf(w, "               %d evictions of %d Workloads; the most evicted, %s, %d times (_workloads.csv)\n",
			q.Evictions, q.Evicted, q.MostEvicted, q.MostEvictions)
	}
}

// readQueues fills in the Jobs' waits from _controllers.csv and
// _workloads.csv, when the run wrote them and has Jobs.
func (s *Summary) readQueues(dir string) error {
	controllers, err := outputs.ReadControllers(filepath.Join(dir, "_controllers.csv"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	workloads, err := outputs.ReadWorkloads(filepath.Join(dir, "_workloads.csv"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if q := outputs.SummariseQueues(controllers, workloads); q.Jobs.Count > 0 || len(q.ClusterQueues) > 0 {
		s.Queues = &q
	}
	return nil
}

// readNodes sums up _nodes.csv, when the run wrote it.
func (s *Summary) readNodes(dir string) error {
	nodes, err := outputs.ReadNodes(filepath.Join(dir, "_nodes.csv"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	n := outputs.SummariseNodes(nodes)
	s.Nodes = &n
	return nil
}

// readOutputs fills in the job counts and times from the output files with
// the given prefix.
func (s *Summary) readOutputs(prefix string) error {
	jobs, err := outputs.ReadCSV(prefix + "_jobs.csv")
	if err != nil {
		return err
	}
	for _, row := range jobs {
		s.Jobs++
		switch row["final_state"] {
		case "COMPLETED_SUCCESSFULLY":
			s.Succeeded++
		case "COMPLETED_FAILED":
			s.Failed++
		case "COMPLETED_WALLTIME_REACHED":
			s.WalltimeReached++
		case "COMPLETED_KILLED":
			s.Killed++
		case "REJECTED":
			s.Rejected++
		}
	}
	sched, err := outputs.ReadCSV(prefix + "_schedule.csv")
	if err != nil {
		return err
	}
	if len(sched) != 1 {
		return fmt.Errorf("launch: %s_schedule.csv: %d rows, want 1", prefix, len(sched))
	}
	if s.Makespan, err = strconv.ParseFloat(sched[0]["makespan"], 64); err != nil {
		return fmt.Errorf("launch: %s_schedule.csv: makespan: %w", prefix, err)
	}
	if s.MeanWaitingTime, err = strconv.ParseFloat(sched[0]["mean_waiting_time"], 64); err != nil {
		return fmt.Errorf("launch: %s_schedule.csv: mean_waiting_time: %w", prefix, err)
	}
	s.Energy = readEnergy(sched[0])
	for col, d := range map[string]*time.Duration{"simulation_time": &s.SimulationWall, "scheduling_time": &s.SchedulingWall} {
		v, err := strconv.ParseFloat(sched[0][col], 64)
		if err != nil {
			return fmt.Errorf("launch: %s_schedule.csv: %s: %w", prefix, col, err)
		}
		*d = time.Duration(v * float64(time.Second))
	}
	return nil
}

// readEnergy reads the energy columns of _schedule.csv's row: nil without
// Batsim's energy plugin, whose consumed_joules is then 0 (-1 less -1)
// and which the embedded engine never has.
func readEnergy(row map[string]string) *Energy {
	joules, err := strconv.ParseFloat(row["consumed_joules"], 64)
	if err != nil || joules <= 0 {
		return nil
	}
	e := &Energy{Joules: joules}
	for col, v := range map[string]*float64{"time_sleeping": &e.Sleeping, "time_switching_off": &e.SwitchingOff, "time_switching_on": &e.SwitchingOn} {
		*v, _ = strconv.ParseFloat(row[col], 64) // absent or malformed: 0
	}
	e.MachineSwitch, _ = strconv.Atoi(row["nb_machine_switches"])
	return e
}

// readStats fills in the server's statistics of the run.
func (s *Summary) readStats(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("launch: the server's statistics: %w", err)
	}
	var p broker.Progress
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("launch: the server's statistics %s: %w", path, err)
	}
	s.Steps, s.Settle, s.AdmissionRejected = p.Steps, p.Settle, p.AdmissionRejected
	s.Preempted, s.Resubmitted = p.Preempted, p.Resubmitted
	return nil
}

// WriteJSON writes v to path, indented, atomically: a reader (or a
// process killed while writing) sees the old file or the whole new one,
// never a part.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'))
}

// humanSeconds says a number of simulated seconds in hours, minutes and
// seconds, or in years beyond what a Duration holds (Batsim's dates reach
// 1e17 s).
func humanSeconds(secs float64) string {
	const year = 365.25 * 24 * 3600
	if math.Abs(secs) >= 100*year {
		return fmt.Sprintf("%.3g years", secs/year)
	}
	return time.Duration(secs * float64(time.Second)).Round(time.Second).String()
}
