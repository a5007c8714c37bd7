package enginerun

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/engine"
)

// Batsim 4.2.1's defaults for the options the engine has no use for; they
// are sent in SIMULATION_BEGINS' config as real Batsim sends them.
const (
	redisHostname = "127.0.0.1"
	redisPort     = 6379
	redisPrefix   = "default"
)

// converter translates the engine's events into protocol events and the
// decision process's events into engine decisions.
type converter struct {
	forwardProfiles      bool
	schedConfig          string
	forwardUnknownEvents bool
	// profiles caches the protocol form of the engine's profiles.
	profiles map[*engine.Profile]batsim.Profile
}

func newConverter(forwardProfiles bool, schedConfig string, forwardUnknownEvents bool) *converter {
	return &converter{
		forwardProfiles:      forwardProfiles,
		schedConfig:          schedConfig,
		forwardUnknownEvents: forwardUnknownEvents,
		profiles:             map[*engine.Profile]batsim.Profile{},
	}
}

// request turns a message of the engine into the message Batsim would send,
// its dates written with six decimals as Batsim writes them.
func (c *converter) request(m engine.Message) (batsim.Message, error) {
	out := batsim.Message{Now: batsimDate(m.Now), Events: make([]batsim.Event, 0, len(m.Events))}
	for i, ev := range m.Events {
		data, err := c.event(ev)
		if err != nil {
			return batsim.Message{}, fmt.Errorf("enginerun: t=%g: event %d (%s): %w", m.Now, i, ev.Type(), err)
		}
		out.Events = append(out.Events, batsim.Event{Timestamp: batsimDate(ev.Time()), Data: data})
	}
	return out, nil
}

func (c *converter) event(ev engine.Event) (batsim.EventData, error) {
	switch ev := ev.(type) {
	case engine.SimulationBegins:
		return c.simulationBegins(ev)
	case engine.JobSubmitted:
		return c.jobSubmitted(ev)
	case engine.JobCompleted:
		alloc, err := batsim.IntervalSetFromIDs(ev.Alloc)
		if err != nil {
			return nil, err
		}
		return batsim.JobCompleted{
			JobID:      batsim.JobID(ev.JobID),
			JobState:   batsim.JobState(ev.State),
			ReturnCode: ev.ReturnCode,
			Alloc:      alloc,
		}, nil
	case engine.JobKilled:
		d := batsim.JobKilled{JobIDs: make([]batsim.JobID, len(ev.JobIDs))}
		for i, id := range ev.JobIDs {
			d.JobIDs[i] = batsim.JobID(id)
		}
		if len(ev.Progress) > 0 {
			d.Progress = make(map[batsim.JobID]batsim.JobProgress, len(ev.Progress))
			for id, p := range ev.Progress {
				if p != nil {
					d.Progress[batsim.JobID(id)] = jobProgress(p)
				}
			}
		}
		return d, nil
	case engine.RequestedCall:
		return batsim.RequestedCall{}, nil
	case engine.Notification:
		return notify(ev)
	case engine.SimulationEnds:
		return batsim.SimulationEnds{}, nil
	}
	return nil, fmt.Errorf("unknown engine event %T", ev)
}

// notify builds a NOTIFY: a machine event's resources, or a generic
// event's object (its type, then its other members as written).
func notify(ev engine.Notification) (batsim.Notify, error) {
	n := batsim.Notify{Type: batsim.NotifyType(ev.Kind)}
	if len(ev.Resources) > 0 {
		set, err := batsim.IntervalSetFromIDs(ev.Resources)
		if err != nil {
			return batsim.Notify{}, err
		}
		n.Resources = set
	}
	if len(ev.Event) > 0 {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(ev.Event, &fields); err != nil {
			return batsim.Notify{}, fmt.Errorf("generic event %q: %w", ev.Kind, err)
		}
		delete(fields, "type")
		if len(fields) > 0 {
			n.Extra = fields
		}
	}
	return n, nil
}

// jobProgress is a job's progress as Batsim writes it (six decimals, as
// every double of its messages).
func jobProgress(p *engine.Progress) batsim.JobProgress {
	out := batsim.JobProgress{Profile: p.Profile, Progress: batsimDate(p.Progress)}
	if p.CurrentTask != nil {
		idx := p.CurrentTaskIndex
		task := jobProgress(p.CurrentTask)
		out.Progress = 0
		out.CurrentTaskIndex, out.CurrentTask = &idx, &task
	}
	return out
}

// simulationBegins builds SIMULATION_BEGINS as Batsim 4.2.1 does: every
// option in config, the workloads' absolute paths, and the profiles that
// the workloads' jobs use (Batsim drops the others when it loads a
// workload).
func (c *converter) simulationBegins(ev engine.SimulationBegins) (batsim.SimulationBegins, error) {
	p := ev.Platform
	d := batsim.SimulationBegins{
		NbResources:         len(p.Resources) + len(p.Storage),
		NbComputeResources:  len(p.Resources),
		NbStorageResources:  len(p.Storage),
		AllowComputeSharing: ev.ComputeSharing,
		AllowStorageSharing: true, // Batsim's default (--disable-storage-sharing)
		Config: batsim.Config{
			RedisHostname:                 redisHostname,
			RedisPort:                     redisPort,
			RedisPrefix:                   redisPrefix,
			ProfilesForwardedOnSubmission: c.forwardProfiles,
			DynamicJobsEnabled:            ev.DynamicJobs,
			DynamicJobsAcknowledged:       ev.AcknowledgeDynamicJobs,
			SchedConfig:                   c.schedConfig,
			ForwardUnknownEvents:          c.forwardUnknownEvents,
		},
		ComputeResources: resources(p.Resources),
		StorageResources: resources(p.Storage),
		Workloads:        make(map[string]string, len(ev.Workloads)),
		Profiles:         make(map[string]map[string]batsim.Profile, len(ev.Workloads)),
	}
	for _, w := range ev.Workloads {
		d.Workloads[w.Name] = w.Path
		profiles := map[string]batsim.Profile{}
		for _, prof := range usedProfiles(w) {
			bp, err := c.profile(prof)
			if err != nil {
				return batsim.SimulationBegins{}, fmt.Errorf("workload %q: %w", w.Name, err)
			}
			profiles[prof.Name] = bp
		}
		d.Profiles[w.Name] = profiles
	}
	return d, nil
}

func resources(rs []engine.Resource) []batsim.Resource {
	out := make([]batsim.Resource, len(rs))
	for i, r := range rs {
		out[i] = batsim.Resource{
			ID:             r.ID,
			Name:           r.Name,
			State:          batsim.ResourceIdle,
			Properties:     r.Properties,
			ZoneProperties: r.ZoneProperties,
		}
	}
	return out
}

// usedProfiles returns the profiles of w that its jobs use, directly or as
// steps of a composed profile.
func usedProfiles(w *engine.Workload) []*engine.Profile {
	seen := map[string]bool{}
	var out []*engine.Profile
	var visit func(name string)
	visit = func(name string) {
		p := w.Profiles[name]
		if seen[name] || p == nil {
			return
		}
		seen[name] = true
		out = append(out, p)
		for _, step := range p.Seq {
			visit(step)
		}
	}
	for _, j := range w.Jobs {
		visit(j.Profile)
	}
	return out
}

// profile returns the profile as written in its workload, user fields
// included.
func (c *converter) profile(p *engine.Profile) (batsim.Profile, error) {
	if bp, ok := c.profiles[p]; ok {
		return bp, nil
	}
	if len(p.Raw) == 0 {
		return batsim.Profile{}, fmt.Errorf("profile %q has no JSON description", p.Name)
	}
	var bp batsim.Profile
	if err := json.Unmarshal(p.Raw, &bp); err != nil {
		return batsim.Profile{}, fmt.Errorf("profile %q: %w", p.Name, err)
	}
	c.profiles[p] = bp
	return bp, nil
}

// jobSubmitted builds JOB_SUBMITTED: the job as written in its workload,
// user fields included, its id replaced by "workload!id", and its profile
// when profiles are forwarded.
func (c *converter) jobSubmitted(ev engine.JobSubmitted) (batsim.JobSubmitted, error) {
	j := ev.Job
	d := batsim.JobSubmitted{JobID: batsim.JobID(j.ID)}
	if len(j.Raw) > 0 {
		if err := json.Unmarshal(j.Raw, &d.Job); err != nil {
			return batsim.JobSubmitted{}, fmt.Errorf("job %q: %w", j.ID, err)
		}
	} else {
		d.Job = batsim.Job{Subtime: j.Subtime, Res: j.Res, Profile: j.Profile, Walltime: j.Walltime}
	}
	d.Job.ID = batsim.JobID(j.ID)
	if c.forwardProfiles {
		if ev.Profile == nil {
			return batsim.JobSubmitted{}, fmt.Errorf("job %q: no profile to forward", j.ID)
		}
		p, err := c.profile(ev.Profile)
		if err != nil {
			return batsim.JobSubmitted{}, fmt.Errorf("job %q: %w", j.ID, err)
		}
		d.Profile = &p
	}
	return d, nil
}

// batsimDate is a date as a decision process reads it from Batsim 4.2.1,
// whose messages write every double with printf("%6f"): six decimals.
// Decision processes answer with those dates, and Batsim applies decisions
// stamped after its clock at their dates (a job may start up to 5e-7 s
// after its submission): the engine does the same.
func batsimDate(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	v, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 6, 64), 64)
	if err != nil {
		return x
	}
	return v
}

// fieldError is an error about one field of an event's data.
type fieldError struct {
	field string
	err   error
}

func (e *fieldError) Error() string { return fmt.Sprintf("field %q: %v", e.field, e.err) }
func (e *fieldError) Unwrap() error { return e.err }

// decisions turns the decision process's reply into engine decisions, on a
// platform of nres resources (compute and storage). An event the engine
// cannot take is a *batsim.MessageError naming it and its field.
func decisions(reply batsim.Message, nres int) ([]engine.Decision, error) {
	out := make([]engine.Decision, 0, len(reply.Events))
	for i, ev := range reply.Events {
		d, err := decision(ev, nres)
		if err != nil {
			// Named as the codec names the events and fields it rejects.
			me := &batsim.MessageError{Event: i, Type: ev.Type(), Err: err}
			var fe *fieldError
			if errors.As(err, &fe) {
				me.Field, me.Err = fe.field, fe.err
			}
			return nil, me
		}
		out = append(out, d)
	}
	return out, nil
}

func decision(ev batsim.Event, nres int) (engine.Decision, error) {
	ts := ev.Timestamp
	switch d := ev.Data.(type) {
	case batsim.ExecuteJob:
		if len(d.StorageMapping) > 0 {
			return nil, &fieldError{"storage_mapping", fmt.Errorf("job %q: storage_mapping is not supported by the embedded engine (it has no storage model)", d.JobID)}
		}
		// Checked before the set is expanded into ids: "0-2147483647"
		// would take gigabytes.
		if ivs := d.Alloc.Intervals(); len(ivs) > 0 && ivs[len(ivs)-1].Last >= nres {
			return nil, &fieldError{"alloc", fmt.Errorf("job %q: resource %d does not exist (the platform has %d resources, 0-%d)",
				d.JobID, ivs[len(ivs)-1].Last, nres, nres-1)}
		}
		var mapping []int
		if len(d.Mapping) > 0 {
			mapping = make([]int, len(d.Mapping))
			for executor, index := range d.Mapping {
				if executor < 0 || executor >= len(mapping) {
					return nil, &fieldError{"mapping", fmt.Errorf("job %q: executors must be numbered 0..%d, got %d", d.JobID, len(mapping)-1, executor)}
				}
				mapping[executor] = index
			}
		}
		return engine.ExecuteJob{Timestamp: ts, JobID: string(d.JobID), Alloc: d.Alloc.IDs(), Mapping: mapping}, nil
	case batsim.RejectJob:
		return engine.RejectJob{Timestamp: ts, JobID: string(d.JobID)}, nil
	case batsim.KillJob:
		ids := make([]string, len(d.JobIDs))
		for i, id := range d.JobIDs {
			ids[i] = string(id)
		}
		return engine.KillJob{Timestamp: ts, JobIDs: ids}, nil
	case batsim.CallMeLater:
		return engine.CallMeLater{Timestamp: ts, When: d.At}, nil
	case batsim.RegisterJob:
		raw, err := json.Marshal(d.Job)
		if err != nil {
			return nil, err
		}
		return engine.RegisterJob{Timestamp: ts, JobID: string(d.JobID), Job: raw}, nil
	case batsim.RegisterProfile:
		raw, err := json.Marshal(d.Profile)
		if err != nil {
			return nil, err
		}
		return engine.RegisterProfile{Timestamp: ts, Workload: d.WorkloadName, Name: d.ProfileName, Profile: raw}, nil
	case batsim.Notify:
		return engine.Notify{Timestamp: ts, Kind: engine.NotifyKind(d.Type)}, nil
	case batsim.SetJobMetadata:
		return engine.SetJobMetadata{Timestamp: ts, JobID: string(d.JobID), Metadata: d.Metadata}, nil
	}
	why := "the embedded engine does not support it"
	switch ev.Type() {
	case batsim.TypeSetResourceState, batsim.TypeQuery:
		why = "the embedded engine has no energy model (no power states, no consumed energy): use real Batsim"
	}
	return nil, errors.New(why)
}
