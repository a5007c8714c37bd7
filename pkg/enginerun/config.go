package enginerun

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/batkube/batkube/pkg/batsim"
)

// DefaultExportPrefix is where the output files go by default:
// out/_jobs.csv and out/_schedule.csv.
const DefaultExportPrefix = "out/"

// DefaultProgressInterval is how often Progress is called by default.
const DefaultProgressInterval = time.Second

// WorkloadNaming is how workloads are named, and so how job ids are prefixed
// ("name!id").
type WorkloadNaming int

const (
	// BatsimNames names the workloads w0, w1... in the order given, as real
	// Batsim does, so that job ids are those of a real Batsim run.
	BatsimNames WorkloadNaming = iota
	// FileNames names each workload after its file's base name without
	// extension (examples/workloads/delay_10.json is "delay_10").
	FileNames
)

// workloadNamings are the namings' names, as String writes them and
// ParseWorkloadNaming reads them.
var workloadNamings = [...]string{BatsimNames: "batsim", FileNames: "file"}

func (n WorkloadNaming) String() string {
	if n >= 0 && int(n) < len(workloadNamings) {
		return workloadNamings[n]
	}
	return fmt.Sprintf("WorkloadNaming(%d)", int(n))
}

// ParseWorkloadNaming reads "batsim" or "file".
func ParseWorkloadNaming(s string) (WorkloadNaming, error) {
	if n := slices.Index(workloadNamings[:], s); n >= 0 {
		return WorkloadNaming(n), nil
	}
	return 0, fmt.Errorf("enginerun: workload naming %q: want batsim or file", s)
}

// Config describes a run. The zero value of every field but Platform is
// usable.
type Config struct {
	// Platform is the SimGrid platform file (Batsim's -p).
	Platform string
	// MasterHost is the name of the host Batsim makes its master (Batsim's
	// -m, --master-host; default engine.DefaultMasterHost): that host, if
	// the platform has it, computes nothing and is no resource. A platform
	// naming none such needs a host with the property role=master.
	MasterHost string
	// Workloads are the workload files (Batsim's -w, repeatable), in order.
	Workloads []string
	// Events are the external events files (Batsim's --events,
	// repeatable), in order: machines becoming unavailable and available
	// again, notified to the decision process.
	Events []string
	// ForwardUnknownEvents forwards the events of unknown types as generic
	// NOTIFYs (Batsim's --forward-unknown-events); without it, such an event
	// is an error.
	ForwardUnknownEvents bool
	// WorkloadNaming is how workloads are named (default BatsimNames).
	WorkloadNaming WorkloadNaming
	// Endpoint is the decision process's REP endpoint (Batsim's -s; default
	// batsim.DefaultEndpoint). "tcp://localhost:port", Batsim's spelling,
	// is dialled as tcp://127.0.0.1:port.
	Endpoint string
	// ExportPrefix prefixes the output files (Batsim's -e):
	// <prefix>_jobs.csv, <prefix>_schedule.csv and
	// <prefix>_machine_states.csv. Its directory is created if missing.
	// Default DefaultExportPrefix.
	ExportPrefix string
	// DisableMachineStates does not write <prefix>_machine_states.csv
	// (Batsim's --disable-machine-state-tracing; Batsim 4.2.1 writes it by
	// default).
	DisableMachineStates bool

	// Batsim's options: --enable-compute-sharing, --enable-dynamic-jobs,
	// --acknowledge-dynamic-jobs, --forward-profiles-on-submission and
	// --sched-cfg (sent in SIMULATION_BEGINS' config.sched-config).
	ComputeSharing bool
	// NoNetwork makes the end of every job heard of at once, whatever the
	// latency of the route from its first host to the master host (see
	// engine.Options.NoNetwork).
	NoNetwork              bool
	DynamicJobs            bool
	AcknowledgeDynamicJobs bool
	ForwardProfiles        bool
	SchedConfig            string

	// Timeout bounds the wait for each reply of the decision process; 0
	// means no limit, as real Batsim. A decision process that dies is
	// detected without it (its connection closes).
	Timeout time.Duration

	// Progress, if not nil, is called during the run, at most once every
	// ProgressInterval (default DefaultProgressInterval), from Run's
	// goroutine.
	Progress         func(Progress)
	ProgressInterval time.Duration
}

// Progress is where a run stands.
type Progress struct {
	// Now is the simulated time, in seconds.
	Now float64
	// Finished counts the jobs finished or rejected, Total the jobs known
	// (static ones and dynamic ones registered so far).
	Finished, Total int
	// Wall is the wall-clock time since the run started.
	Wall time.Duration
}

// withDefaults checks c and fills in its defaults.
func (c Config) withDefaults() (Config, error) {
	if c.Platform == "" {
		return c, errors.New("enginerun: no platform file")
	}
	if c.WorkloadNaming != BatsimNames && c.WorkloadNaming != FileNames {
		return c, fmt.Errorf("enginerun: unknown %v", c.WorkloadNaming)
	}
	if c.Timeout < 0 {
		return c, fmt.Errorf("enginerun: negative timeout %v", c.Timeout)
	}
	if c.Endpoint == "" {
		c.Endpoint = batsim.DefaultEndpoint
	}
	c.Endpoint = NormalizeEndpoint(c.Endpoint)
	if c.ExportPrefix == "" {
		c.ExportPrefix = DefaultExportPrefix
	}
	if c.ProgressInterval <= 0 {
		c.ProgressInterval = DefaultProgressInterval
	}
	return c, nil
}

// NormalizeEndpoint turns Batsim's tcp://localhost:port into
// tcp://127.0.0.1:port (the IPv4 loopback a decision process binds by
// default); other endpoints are returned unchanged.
func NormalizeEndpoint(endpoint string) string {
	const localhost = "tcp://localhost:"
	if strings.HasPrefix(endpoint, localhost) {
		return "tcp://127.0.0.1:" + endpoint[len(localhost):]
	}
	return endpoint
}
