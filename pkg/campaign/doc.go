// Package campaign runs a matrix of simulations — schedulers × platforms ×
// workloads × repetitions, read from a campaign file — and compares them.
//
// The matrix is a pure function of the file: Campaign.Runs lists the runs
// in a fixed order, repetition first (every setting's first run, then
// every setting's second...), then platform, workload and scheduler, and a
// run's index in that list is what a Kubernetes Indexed Job's completion
// index names. Each run has a name made of its scheduler's, platform's and
// workload's names and its repetition, and its outputs go to OUT/<name>/.
//
// Runs are resumable: a run's folder holds run.json (the settings it was
// started with) and, once it ended, launch's summary.json (written last and
// atomically); a folder whose summary says succeeded and whose run.json
// matches the run's settings is a finished run, and anything else is
// started again from an empty folder (State).
//
// Locally, Runner runs the runs N at a time (each with its own ports, from
// one launch.Ports), reports progress and goes on past a failed run. On a
// cluster, EmitJob writes a batch/v1 Indexed Job whose pod K runs run K.
// Collect reads the finished runs and makes the comparison: a table per
// setting (mean ± standard deviation over repetitions) and pkg/report's
// HTML report.
package campaign
