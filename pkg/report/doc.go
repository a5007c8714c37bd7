// Package report makes the report of runs of batkube-run: it reads a run's
// output folder (_jobs.csv, _pods.csv, summary.json) with the run's platform
// and workloads, computes its figures and time series, draws its charts with
// gonum.org/v1/plot, and writes one self-contained HTML page (inline SVG, no
// script, nothing fetched) plus each chart as SVG and PNG files.
//
// # What is computed
//
//   - Figures: jobs by final state; makespan (the last end of a job);
//     waiting time (start − submission: mean, nearest-rank 95th percentile,
//     max) and slowdown (turnaround / execution time: mean, max) over the
//     jobs that started — Batsim's mean_waiting_time divides by every job,
//     rejected ones included, so the two differ when jobs are rejected;
//     utilisation.
//   - Utilisation over time: the cpu (memory) requests of the pods of the
//     running jobs over the platform's allocatable cpu (memory). Requests
//     come from the workloads through pkg/translate, exactly as the broker
//     makes the pods (profile cpu and memory, pod_template); allocatable
//     from the platform through pkg/engine's parser and translate.Node. Its
//     time average over [0, makespan] is the utilisation figure.
//   - Queue length over time: the jobs submitted and not started (a
//     rejected job leaves the queue when its pod ended, from _pods.csv).
//   - Waiting-time distribution: the empirical CDF of the started jobs'
//     waiting times.
//   - Gantt chart: each pod on its node from its start to its end
//     (_pods.csv; else _jobs.csv's allocated_resources), pods running at
//     once on a node in lanes of the node's band, a colour per job.
//
// Several runs share their charts' axes, so that side by side they read on
// the same scale, and get overlay charts and a comparison table.
//
// # Labels and layout
//
// The page and the charts name each run by a short label (Run.Label): one
// given, else the campaign's names of its setting when a campaign wrote
// its run.json, else its folder's name without what all the runs' names
// share (labelRuns). A chart's legend lies in a band below its plot, never
// over the curves; a title too wide for its chart wraps. Each inline chart
// gives its data area (data-plot-area), with which screenshot.LayoutScript
// checks in a browser that no text of the chart lies over its curves or is
// clipped, and that no table runs off the page.
package report
