package swf

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// WalltimePolicy says how a job's walltime is derived.
type WalltimePolicy string

const (
	// WalltimeMax (the default, also as "") is Batsim's converter's rule:
	// max(requested time, WalltimeFactor x run time).
	WalltimeMax WalltimePolicy = "max"
	// WalltimeRequested is the requested time (field 9); a job whose
	// requested time is unknown gets no walltime.
	WalltimeRequested WalltimePolicy = "requested"
	// WalltimeNone gives no job a walltime.
	WalltimeNone WalltimePolicy = "none"
)

// ProcessorSource says which processor count of a record a job asks for.
type ProcessorSource string

const (
	// ProcessorsRequested (the default, also as "") takes the requested
	// number (field 8), or the allocated one (field 5) when the requested
	// one is unknown.
	ProcessorsRequested ProcessorSource = "requested"
	// ProcessorsAllocated takes the allocated number (field 5), as Batsim's
	// converter does, or the requested one when the allocated one is
	// unknown.
	ProcessorsAllocated ProcessorSource = "allocated"
)

// DefaultWalltimeFactor is the factor of WalltimeMax when
// Options.WalltimeFactor is 0 (Batsim's converter's default).
const DefaultWalltimeFactor = 2

// Options tune Convert. The zero value follows Batsim's converter: one
// processor per host, walltime max(requested, 2 x run time), the whole
// trace, nb_res from the header or the biggest job.
type Options struct {
	// CoresPerHost is the number of cores of a host. 0 (the default) is
	// Batsim's convention: one processor is one host, res = processors,
	// and profiles carry no cpu nor memory. With C > 0 a job of P
	// processors asks for ceil(P/C) hosts, each pod requesting
	// ceil(P/hosts) cores and the memory of that many processors.
	CoresPerHost int
	// MemoryFromUsed takes the used memory (field 7) when the requested
	// memory (field 10) is unknown. Only with CoresPerHost > 0.
	MemoryFromUsed bool
	// Processors chooses requested or allocated processors first; "" is
	// ProcessorsRequested.
	Processors ProcessorSource
	// Walltime is the walltime policy; "" is WalltimeMax.
	Walltime WalltimePolicy
	// WalltimeFactor multiplies the run time under WalltimeMax; 0 means
	// DefaultWalltimeFactor (2).
	WalltimeFactor float64
	// From and To bound the submit times kept, in the trace's own scale
	// (seconds, field 2): From inclusive, To exclusive. To <= 0 means no
	// upper bound; From 0 keeps everything from the start.
	From, To float64
	// MaxJobs keeps at most this many jobs, the first in submit order after
	// cleaning and after the From/To window; 0 keeps them all.
	MaxJobs int
	// KeepAbsoluteTimes keeps the trace's submit times instead of shifting
	// them so that the first kept job submits at 0.
	KeepAbsoluteTimes bool
	// DropFailed drops failed jobs (status 0). By default they are kept:
	// they ran, and occupied the machine, for their run time.
	DropFailed bool
	// DropCancelled drops cancelled jobs that did run (status 5, run time >
	// 0). By default they are kept, for the same reason. Cancelled jobs that
	// never ran are always dropped.
	DropCancelled bool
	// NbRes is the platform size written as nb_res, in hosts. 0 takes the
	// header's MaxProcs (else MaxNodes) converted into hosts through
	// CoresPerHost, else the biggest kept job. Jobs bigger than a given or
	// header-derived platform are dropped.
	NbRes int
}

// Validate checks the options.
func (o Options) Validate() error {
	switch {
	case o.CoresPerHost < 0:
		return fmt.Errorf("CoresPerHost is %d, want >= 0 (0: one processor per host)", o.CoresPerHost)
	case o.WalltimeFactor < 0 || math.IsNaN(o.WalltimeFactor) || math.IsInf(o.WalltimeFactor, 0):
		return fmt.Errorf("WalltimeFactor is %g, want a finite number >= 0 (0: %d)", o.WalltimeFactor, DefaultWalltimeFactor)
	case o.MaxJobs < 0:
		return fmt.Errorf("MaxJobs is %d, want >= 0 (0: all)", o.MaxJobs)
	case o.NbRes < 0:
		return fmt.Errorf("NbRes is %d, want >= 0 (0: from the header or the biggest job)", o.NbRes)
	case math.IsNaN(o.From) || math.IsNaN(o.To):
		return errors.New("From and To must be numbers")
	case o.To > 0 && o.To <= o.From:
		return fmt.Errorf("the window [From %g, To %g) is empty", o.From, o.To)
	}
	switch o.Walltime {
	case "", WalltimeMax, WalltimeRequested, WalltimeNone:
	default:
		return fmt.Errorf("Walltime is %q, want %q, %q or %q", o.Walltime, WalltimeMax, WalltimeRequested, WalltimeNone)
	}
	switch o.Processors {
	case "", ProcessorsRequested, ProcessorsAllocated:
	default:
		return fmt.Errorf("Processors is %q, want %q or %q", o.Processors, ProcessorsRequested, ProcessorsAllocated)
	}
	return nil
}

// Reasons a record is dropped: the keys of Report.Dropped. They are stable.
const (
	ReasonPartialExecution     = "partial-execution"
	ReasonCancelledBeforeStart = "cancelled-before-start"
	ReasonCancelled            = "cancelled"
	ReasonFailed               = "failed"
	ReasonUnknownRunTime       = "unknown-run-time"
	ReasonZeroRunTime          = "zero-run-time"
	ReasonNoProcessors         = "no-processors"
	ReasonUnknownSubmitTime    = "unknown-submit-time"
	ReasonWalltimeTooShort     = "walltime-not-above-run-time"
	ReasonBiggerThanPlatform   = "bigger-than-platform"
	ReasonDuplicateJobNumber   = "duplicate-job-number"
	ReasonBeforeFrom           = "before-from"
	ReasonAfterTo              = "after-to"
	ReasonBeyondMaxJobs        = "beyond-max-jobs"
)

// reasonDescriptions explain the reasons, in the order of the rules.
var reasonDescriptions = []struct{ reason, what string }{
	{ReasonPartialExecution, "status 2, 3 or 4: one part of a checkpointed or swapped job, which its own line describes whole"},
	{ReasonCancelledBeforeStart, "status 5 and run time -1 or 0: cancelled before it ran"},
	{ReasonCancelled, "status 5 after it ran (DropCancelled)"},
	{ReasonFailed, "status 0 (DropFailed)"},
	{ReasonUnknownRunTime, "run time unknown (-1)"},
	{ReasonZeroRunTime, "run time 0 (under half a second)"},
	{ReasonNoProcessors, "neither requested nor allocated processors known"},
	{ReasonUnknownSubmitTime, "submit time unknown (-1)"},
	{ReasonWalltimeTooShort, "walltime not longer than the run time"},
	{ReasonBiggerThanPlatform, "more hosts than nb_res"},
	{ReasonDuplicateJobNumber, "job number already used"},
	{ReasonBeforeFrom, "submitted before From"},
	{ReasonAfterTo, "submitted at or after To"},
	{ReasonBeyondMaxJobs, "past MaxJobs"},
}

// ReasonDescription says in words what a drop reason means.
func ReasonDescription(reason string) string {
	for _, d := range reasonDescriptions {
		if d.reason == reason {
			return d.what
		}
	}
	return ""
}

// Workload is a Batsim workload of delay jobs; encoding/json marshals it
// into Batsim's workload JSON (WriteJSON writes it one job per line).
type Workload struct {
	// NbRes is the number of hosts of the platform the workload is for.
	NbRes int `json:"nb_res"`
	// Description is free text (Batsim ignores it); empty is omitted.
	Description string `json:"description,omitempty"`
	// Jobs are sorted by submission time, then id.
	Jobs []Job `json:"jobs"`
	// Profiles by name.
	Profiles map[string]Profile `json:"profiles"`
}

// Job is a Batsim job.
type Job struct {
	// ID is the SWF job number.
	ID int `json:"id"`
	// Subtime is the submission time in seconds.
	Subtime float64 `json:"subtime"`
	// Res is the number of hosts.
	Res int `json:"res"`
	// Walltime in seconds; 0 means none (the field is omitted).
	Walltime float64 `json:"walltime,omitempty"`
	// Profile names the job's profile.
	Profile string `json:"profile"`
}

// Profile is a Batsim delay profile, with the requests of each of the job's
// pods when CoresPerHost is set.
type Profile struct {
	// Type is "delay".
	Type string `json:"type"`
	// Delay is the run time in seconds.
	Delay float64 `json:"delay"`
	// CPU is the cores each pod requests; 0 is omitted.
	CPU int `json:"cpu,omitempty"`
	// Memory is the memory each pod requests, a quantity such as "2Gi" or
	// "1536Mi"; empty is omitted.
	Memory string `json:"memory,omitempty"`
}

// Report tells what Convert kept and dropped.
type Report struct {
	// Read is the number of job records in the trace.
	Read int
	// Kept is the number of jobs in the workload.
	Kept int
	// Dropped counts the dropped records by reason (the Reason constants).
	Dropped map[string]int
	// FirstSubmit and LastSubmit are the submit times of the first and the
	// last kept jobs, in the trace's own scale.
	FirstSubmit, LastSubmit float64
	// Shift was subtracted from every submit time (FirstSubmit, or 0 with
	// KeepAbsoluteTimes).
	Shift float64
	// Largest is the kept job asking for the most processors (the first in
	// submit order among equals).
	Largest LargestJob
	// NbRes is the workload's nb_res and NbResFrom where it came from:
	// "option", "header MaxProcs", "header MaxNodes" or "biggest job".
	NbRes     int
	NbResFrom string
	// Profiles is the number of distinct profiles.
	Profiles int
}

// LargestJob describes the biggest kept job.
type LargestJob struct {
	JobNumber  int
	Processors int
	Hosts      int
}

// DroppedTotal is the number of dropped records.
func (r Report) DroppedTotal() int {
	n := 0
	for _, c := range r.Dropped {
		n += c
	}
	return n
}

// ErrNoJobs is returned (wrapped) when no job is left to convert.
var ErrNoJobs = errors.New("no job left to convert")

// maxHosts bounds res and nb_res (Batsim's ints).
const maxHosts = math.MaxInt32

// candidate is a record that passed the per-record rules.
type candidate struct {
	rec        *Record
	processors int
	hosts      int
	cpu        int
	memory     string
	walltime   float64
}

// Convert converts a trace into a Batsim workload, cleaning it by the rules
// of the package documentation. The Report is filled even on error.
func Convert(t *Trace, opts Options) (Workload, Report, error) {
	rep := Report{Dropped: map[string]int{}}
	if t == nil {
		return Workload{}, rep, errors.New("no trace")
	}
	if err := opts.Validate(); err != nil {
		return Workload{}, rep, err
	}
	rep.Read = len(t.Records)
	drop := func(reason string) { rep.Dropped[reason]++ }

	nbRes, nbResFrom := platformSize(t, opts)
	var cands []candidate
	for i := range t.Records {
		c, reason := classify(&t.Records[i], opts)
		if reason == "" && (c.hosts > maxHosts || nbRes > 0 && c.hosts > nbRes) {
			reason = ReasonBiggerThanPlatform
		}
		if reason != "" {
			drop(reason)
			continue
		}
		cands = append(cands, c)
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i].rec, cands[j].rec
		if a.SubmitTime != b.SubmitTime {
			return a.SubmitTime < b.SubmitTime
		}
		if a.JobNumber != b.JobNumber {
			return a.JobNumber < b.JobNumber
		}
		return a.Line < b.Line
	})
	kept := cands[:0]
	seen := make(map[int]bool, len(cands))
	for _, c := range cands {
		switch {
		case seen[c.rec.JobNumber]:
			drop(ReasonDuplicateJobNumber)
		case c.rec.SubmitTime < opts.From:
			drop(ReasonBeforeFrom)
		case opts.To > 0 && c.rec.SubmitTime >= opts.To:
			drop(ReasonAfterTo)
		case opts.MaxJobs > 0 && len(kept) >= opts.MaxJobs:
			drop(ReasonBeyondMaxJobs)
		default:
			kept = append(kept, c)
		}
		seen[c.rec.JobNumber] = true
	}
	if len(kept) == 0 {
		return Workload{}, rep, fmt.Errorf("%w: %d records read, all dropped (%s)", ErrNoJobs, rep.Read, summarize(rep.Dropped))
	}

	w := Workload{Profiles: map[string]Profile{}, Jobs: make([]Job, 0, len(kept))}
	rep.FirstSubmit, rep.LastSubmit = kept[0].rec.SubmitTime, kept[len(kept)-1].rec.SubmitTime
	if !opts.KeepAbsoluteTimes {
		rep.Shift = rep.FirstSubmit
	}
	for _, c := range kept {
		p := Profile{Type: "delay", Delay: c.rec.RunTime, CPU: c.cpu, Memory: c.memory}
		name := profileName(p)
		w.Profiles[name] = p
		w.Jobs = append(w.Jobs, Job{
			ID:       c.rec.JobNumber,
			Subtime:  c.rec.SubmitTime - rep.Shift,
			Res:      c.hosts,
			Walltime: c.walltime,
			Profile:  name,
		})
		if c.processors > rep.Largest.Processors {
			rep.Largest = LargestJob{JobNumber: c.rec.JobNumber, Processors: c.processors, Hosts: c.hosts}
		}
		if c.hosts > nbRes && nbResFrom == "" {
			// No platform given: the biggest job sizes it.
			nbRes = c.hosts
		}
	}
	if nbResFrom == "" {
		nbResFrom = "biggest job"
	}
	w.NbRes = nbRes
	rep.Kept, rep.NbRes, rep.NbResFrom, rep.Profiles = len(w.Jobs), nbRes, nbResFrom, len(w.Profiles)
	return w, rep, nil
}

// platformSize returns nb_res and where it comes from when it is given or
// in the header, or 0 and "" when the biggest job must decide.
func platformSize(t *Trace, opts Options) (int, string) {
	if opts.NbRes > 0 {
		return opts.NbRes, "option"
	}
	for _, key := range []string{KeyMaxProcs, KeyMaxNodes} {
		if procs, ok := t.HeaderInt(key); ok && procs > 0 {
			hosts := procs
			if opts.CoresPerHost > 0 {
				hosts = ceilDiv(procs, opts.CoresPerHost)
			}
			if hosts <= maxHosts {
				return hosts, "header " + key
			}
		}
	}
	return 0, ""
}

// classify applies the per-record rules (1 to 9 of the package
// documentation) and sizes the job; it returns the drop reason, if any.
func classify(r *Record, opts Options) (candidate, string) {
	switch {
	case r.Status == StatusPartialContinued || r.Status == StatusPartialLastComplete || r.Status == StatusPartialLastFailed:
		return candidate{}, ReasonPartialExecution
	case r.Status == StatusCancelled && r.RunTime <= 0:
		return candidate{}, ReasonCancelledBeforeStart
	case r.Status == StatusCancelled && opts.DropCancelled:
		return candidate{}, ReasonCancelled
	case r.Status == StatusFailed && opts.DropFailed:
		return candidate{}, ReasonFailed
	case r.RunTime < 0:
		return candidate{}, ReasonUnknownRunTime
	case r.RunTime == 0:
		return candidate{}, ReasonZeroRunTime
	}
	procs := processors(r, opts.Processors)
	if procs <= 0 {
		return candidate{}, ReasonNoProcessors
	}
	if r.SubmitTime < 0 {
		return candidate{}, ReasonUnknownSubmitTime
	}
	c := candidate{rec: r, processors: procs, hosts: procs}
	var ok bool
	if c.walltime, ok = walltime(r, opts); !ok {
		return candidate{}, ReasonWalltimeTooShort
	}
	if opts.CoresPerHost > 0 {
		c.hosts = ceilDiv(procs, opts.CoresPerHost)
		c.cpu = ceilDiv(procs, c.hosts)
		if kb := memoryPerProcessor(r, opts.MemoryFromUsed); kb > 0 {
			// Memory beyond 2^53 Mi (8 ZiB) is not a real request: unknown.
			if mi := math.Ceil(kb * float64(c.cpu) / 1024); mi <= maxExactInteger {
				c.memory = mebibytes(mi)
			}
		}
	}
	return c, ""
}

// processors returns the processor count the job asks for, or -1.
func processors(r *Record, source ProcessorSource) int {
	first, second := r.RequestedProcessors, r.AllocatedProcessors
	if source == ProcessorsAllocated {
		first, second = second, first
	}
	switch {
	case first > 0:
		return first
	case second > 0:
		return second
	}
	return -1
}

// walltime returns the job's walltime (0: none), and false when it is not
// longer than the run time.
func walltime(r *Record, opts Options) (float64, bool) {
	var w float64
	switch opts.Walltime {
	case WalltimeNone:
		return 0, true
	case WalltimeRequested:
		if r.RequestedTime <= 0 {
			return 0, true
		}
		w = r.RequestedTime
	default:
		factor := opts.WalltimeFactor
		if factor == 0 {
			factor = DefaultWalltimeFactor
		}
		w = math.Max(factor*r.RunTime, r.RequestedTime)
	}
	return w, w > r.RunTime
}

// memoryPerProcessor returns the memory in KB per processor, or 0 when
// unknown.
func memoryPerProcessor(r *Record, fromUsed bool) float64 {
	if r.RequestedMemory > 0 {
		return r.RequestedMemory
	}
	if fromUsed && r.UsedMemory > 0 {
		return r.UsedMemory
	}
	return 0
}

// mebibytes writes a whole number of Mi as a quantity, in Gi when exact.
func mebibytes(mi float64) string {
	if mi >= 1024 && math.Mod(mi, 1024) == 0 {
		return strconv.FormatFloat(mi/1024, 'f', -1, 64) + "Gi"
	}
	return strconv.FormatFloat(mi, 'f', -1, 64) + "Mi"
}

// profileName names a profile after its content: "d120", "d120_c4_m2Gi".
func profileName(p Profile) string {
	var b strings.Builder
	b.WriteString("d")
	b.WriteString(strconv.FormatFloat(p.Delay, 'f', -1, 64))
	if p.CPU > 0 {
		b.WriteString("_c")
		b.WriteString(strconv.Itoa(p.CPU))
	}
	if p.Memory != "" {
		b.WriteString("_m")
		b.WriteString(p.Memory)
	}
	return b.String()
}

// ceilDiv is ceil(a/b) for a, b > 0, without overflow.
func ceilDiv(a, b int) int { return (a-1)/b + 1 }

// summarize lists drop counts as "reason: n, ..." in sorted order.
func summarize(dropped map[string]int) string {
	if len(dropped) == 0 {
		return "no record"
	}
	keys := make([]string, 0, len(dropped))
	for k := range dropped {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, dropped[k])
	}
	return strings.Join(parts, ", ")
}
