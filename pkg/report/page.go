package report

// pageTemplate is the report's page (html/template): one self-contained
// document, its charts inline SVG, no script, nothing loaded from elsewhere.
// It is Go source rather than an embedded file so that the Makefile, which
// rebuilds the commands when a .go file changes, sees its changes.
const pageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="batkube-report">
<title>{{.Title}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; background: #fff; }
h1 { font-size: 1.5em; margin: 0 0 .3em; }
h2 { font-size: 1.2em; margin: 1.5em 0 .5em; border-bottom: 1px solid #ddd; }
h3 { font-size: 1em; margin: .2em 0; }
table { border-collapse: collapse; margin: .3em 0 1em; }
th, td { padding: .15em .6em; border-bottom: 1px solid #eee; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
thead th { border-bottom: 2px solid #ccc; }
table.figures thead th { white-space: normal; vertical-align: bottom; }
table.figures td.label { white-space: normal; min-width: 8em; }
#groups td { white-space: normal; }
.sd { white-space: nowrap; }
.swatch { display: inline-block; width: .8em; height: .8em; margin-right: .4em; border-radius: 2px; vertical-align: -.05em; }
.dir { margin: 0 0 .3em; color: #777; font-size: .8em; overflow-wrap: anywhere; }
.grid { display: grid; gap: 1em 1.5em; grid-template-columns: repeat(auto-fill, minmax(420px, 1fr)); }
#runs { grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); max-width: calc({{len .Runs}} * (720px + 1.5em)); }
#runs > .run { display: grid; grid-row: span {{.RunRows}}; grid-template-rows: subgrid; }
#runs > .run > div { min-width: 0; overflow-x: auto; }
.grid > div { min-width: 0; overflow-x: auto; }
table.summary td { white-space: normal; text-align: left; }
svg.chart { width: 100%; height: auto; display: block; }
.notes { color: #a60; font-size: .9em; }
.muted { color: #777; font-size: .9em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="muted">{{if gt (len .Runs) 1}}{{len .Runs}} runs (each run's folder is under its name in Runs){{else}}1 run (its folder is under its name in Runs){{end}}. Times are simulated seconds unless said otherwise.</p>

{{if .Groups}}<h2>Settings compared</h2>
<table id="groups" class="figures">
<thead><tr><th>setting</th><th>runs</th><th>jobs</th><th>completed</th><th>makespan<br>(s)</th><th>mean<br>waiting (s)</th><th>p95<br>waiting (s)</th><th>mean<br>slowdown</th><th>cpu<br>utilisation</th><th>memory<br>utilisation</th><th>wall<br>(s)</th></tr></thead>
<tbody>
{{range .Groups}}{{$n := len .Runs}}<tr data-group="{{.Name}}">
<td class="label">{{.Name}}</td>
<td data-metric="runs" title="{{range $i, $r := .Runs}}{{if $i}}, {{end}}{{$r}}{{end}}">{{$n}}</td>
<td data-metric="jobs">{{spread .Jobs $n "%.0f"}}</td>
<td data-metric="succeeded">{{spread .Succeeded $n "%.0f"}}</td>
<td data-metric="makespan" data-mean="{{printf "%.3f" .Makespan.Mean}}">{{spread .Makespan $n "%.3f"}}</td>
<td data-metric="mean-waiting" data-mean="{{printf "%.3f" .MeanWaiting.Mean}}">{{spread .MeanWaiting $n "%.3f"}}</td>
<td data-metric="p95-waiting">{{spread .P95Waiting $n "%.3f"}}</td>
<td data-metric="mean-slowdown">{{spread .MeanSlowdown $n "%.3f"}}</td>
{{if .HasUtilisation}}<td data-metric="cpu-utilisation">{{spreadPercent .CPUUtilisation $n}}</td><td data-metric="memory-utilisation">{{spreadPercent .MemoryUtilisation $n}}</td>{{else}}<td>–</td><td>–</td>{{end}}
<td data-metric="wall">{{if .HasWall}}{{spread .Wall $n "%.1f"}}{{else}}–{{end}}</td>
</tr>
{{end}}</tbody>
</table>
<p class="muted">Each setting's figures are the mean ± sample standard deviation over its runs (the mean alone for one run); its runs are below.</p>
{{end}}
<h2>{{if gt (len .Runs) 1}}Comparison{{else}}Figures{{end}}</h2>
<table id="comparison" class="figures">
<thead><tr><th>run</th>{{if $.HasJobs}}<th>Job wait:<br>mean (s)</th><th>Job wait:<br>p95 (s)</th>{{end}}<th>jobs</th><th>completed</th><th>makespan<br>(s)</th><th>{{if $.HasJobs}}pod {{end}}mean<br>waiting (s)</th><th>{{if $.HasJobs}}pod {{end}}p95<br>waiting (s)</th><th>mean<br>slowdown</th><th>cpu<br>utilisation</th><th>memory<br>utilisation</th></tr></thead>
<tbody>
{{range $i, $r := .Runs}}{{$f := .Figures}}<tr data-run="{{.Run.Name}}" data-label="{{.Run.Label}}">
<td class="label" title="{{.Run.Dir}}">{{if gt (len $.Runs) 1}}<span class="swatch" style="background: {{colour $i}}"></span>{{end}}{{.Run.Label}}</td>
{{if $.HasJobs}}{{if $f.KubeJobs}}<td data-metric="job-mean-waiting">{{seconds $f.MeanJobWaiting}}</td><td data-metric="job-p95-waiting">{{seconds $f.P95JobWaiting}}</td>{{else}}<td>–</td><td>–</td>{{end}}{{end}}
<td data-metric="jobs">{{$f.Jobs}}</td>
<td data-metric="succeeded">{{$f.Succeeded}}</td>
<td data-metric="makespan">{{seconds $f.Makespan}}</td>
<td data-metric="mean-waiting">{{seconds $f.MeanWaiting}}</td>
<td data-metric="p95-waiting">{{seconds $f.P95Waiting}}</td>
<td data-metric="mean-slowdown">{{fixed $f.MeanSlowdown}}</td>
{{if $f.HasUtilisation}}<td data-metric="cpu-utilisation">{{percent $f.CPUUtilisation}}</td><td data-metric="memory-utilisation">{{percent $f.MemoryUtilisation}}</td>{{else}}<td>–</td><td>–</td>{{end}}
</tr>
{{end}}</tbody>
</table>
{{if .HasJobs}}<p class="muted">Job wait: from a batch/v1 Job's creation (what its user did) to its first pod's start, time in Kueue's queues included; pod waiting counts from each pod's creation, as Batsim counts a job's.</p>
{{end}}<p class="muted">Waiting time and slowdown (turnaround / execution time) are over the jobs that started (Batsim's mean_waiting_time divides by every job, rejected ones included); p95 is the nearest-rank 95th percentile. Utilisation: the cpu (memory) requested by the running jobs' pods, integrated over [0, makespan], over the platform's allocatable cpu (memory) times the makespan.</p>

{{if .Comparison}}<div class="grid">
{{range .Comparison}}<div>{{svg .}}</div>
{{end}}</div>{{end}}

<h2>Runs</h2>
<div class="grid" id="runs">
{{range $i, $r := .Runs}}{{$f := .Figures}}{{$s := .Run.Summary}}<div class="run" data-run="{{.Run.Name}}">
<div class="summary">
<h3>{{.Run.Label}}</h3>
<p class="dir"><code>{{.Run.Dir}}</code></p>
<table class="summary">
<tr><th>jobs</th><td>{{$f.Jobs}}: {{$f.Succeeded}} succeeded, {{$f.Failed}} failed, {{$f.WalltimeReached}} walltime, {{$f.Killed}} killed, {{$f.Rejected}} rejected</td></tr>
<tr><th>makespan</th><td>{{seconds $f.Makespan}} s</td></tr>
{{with .Run.Queues}}<tr><th>Job waiting: mean, p95, max</th><td>{{seconds .Jobs.Mean}}, {{seconds .Jobs.P95}}, {{seconds .Jobs.Max}} s over {{.Jobs.Done}} of {{.Jobs.Count}} Jobs (from each Job's creation to its first pod's start)</td></tr>
{{end}}<tr><th>{{if .Run.Queues}}pod {{end}}waiting: mean, p95, max</th><td>{{seconds $f.MeanWaiting}}, {{seconds $f.P95Waiting}}, {{seconds $f.MaxWaiting}} s</td></tr>
<tr><th>slowdown: mean, max</th><td>{{fixed $f.MeanSlowdown}}, {{fixed $f.MaxSlowdown}}</td></tr>
{{if $f.HasUtilisation}}<tr><th>utilisation: cpu, memory</th><td>{{percent $f.CPUUtilisation}}, {{percent $f.MemoryUtilisation}}</td></tr>{{end}}
{{with $s}}<tr><th>wall time</th><td>{{duration .Wall}} ({{printf "%.0f" .SpeedUp}}× real time); simulation proper {{duration .SimulationWall}} ({{printf "%.0f" .SimulationSpeedUp}}×)</td></tr>
{{range .Processes}}<tr><th>{{.Name}}</th><td>CPU {{duration .CPU}}, peak RSS {{mib .MaxRSS}} MiB</td></tr>
{{end}}<tr><th>settling</th><td>{{.Settle.Policy}}: {{.Steps}} steps, {{.Settle.Verdict}}: {{.Settle.NothingPending}} with nothing pending, {{.Settle.Idle}} with the scheduler known idle, {{.Settle.Quiet}} on the quiet window, {{.Settle.MaxWait}} on settle-max, {{.Settle.Unproven}} unproven</td></tr>
{{if .Preempted}}<tr><th>preempted</th><td>{{.Preempted}} jobs ({{.Resubmitted}} resubmitted)</td></tr>{{end}}
{{if .AdmissionRejected}}<tr><th>refused by kubelet</th><td>{{.AdmissionRejected}} pods</td></tr>{{end}}
{{with .Nodes}}<tr><th>nodes launched</th><td>{{.Launched}} ({{.Deleted}} deleted, {{.Unmapped}} on no pool host), at most {{.Peak}} at once; {{printf "%.3f" .NodeHours}} node-hours, cost {{printf "%.4f" .Cost}}</td></tr>{{end}}
{{with .Energy}}<tr><th>energy</th><td>{{printf "%.0f" .Joules}} J from the first submission to the last job's end; machines asleep {{printf "%.0f" .Sleeping}} s, switching off {{printf "%.0f" .SwitchingOff}} s, on {{printf "%.0f" .SwitchingOn}} s ({{.MachineSwitch}} switches)</td></tr>{{end}}
<tr><th>simulator</th><td>{{.Engine}}</td></tr>
{{else}}<tr><th>summary.json</th><td>none in this folder</td></tr>
{{end}}</table>
{{with .Run.QueueRows}}<table class="queues">
<thead><tr><th>ClusterQueue</th><th title="Workloads, and how many were admitted">admitted</th><th title="from the Workload's (its Job's) creation to its first admission: mean, p95">admission (s)</th><th title="from the Job's creation to its first pod's start: mean, p95">Job wait (s)</th><th title="cpu quota its admitted Workloads used, time average over the run, and its share of the nominal quota">cpu used</th></tr></thead>
<tbody>{{range .}}<tr data-cluster-queue="{{.ClusterQueue}}"><td>{{.ClusterQueue}}</td><td>{{.Admission.Done}}/{{.Admission.Count}}</td><td>{{printf "%.1f" .Admission.Mean}}, {{printf "%.1f" .Admission.P95}}</td><td>{{printf "%.1f" .Jobs.Mean}}, {{printf "%.1f" .Jobs.P95}}</td><td>{{if .HasUsage}}{{percent .Usage.Fraction}} of {{printf "%.0f" .Usage.Nominal}}{{else}}–{{end}}</td></tr>
{{end}}</tbody></table>
<p class="muted">Per ClusterQueue: admission is the time from a Workload's creation (its Job's instant) to its first admission, Job wait to its first pod's start (mean, p95); cpu used is the quota its admitted Workloads held, averaged over the run, as a share of its nominal quota (what Kueue's scalability test reports).</p>{{end}}
{{if gt (len .Run.Controllers) $.ManyRows}}<p class="muted">{{len .Run.Controllers}} controller objects: see <code>_controllers.csv</code>.</p>
{{else}}{{with .Run.Controllers}}<table class="controllers">
<thead><tr><th>controller</th><th>created</th><th>first start</th><th>last end</th><th>pods</th><th>succeeded</th><th>failed</th><th>killed</th><th>state</th></tr></thead>
<tbody>{{range .}}<tr><td>{{index . "kind"}} {{index . "namespace"}}/{{index . "name"}}</td><td>{{index . "created"}}</td><td>{{index . "first_start"}}</td><td>{{index . "last_end"}}</td><td>{{index . "pods"}}</td><td>{{index . "succeeded"}}</td><td>{{index . "failed"}}</td><td>{{index . "killed"}}</td><td>{{index . "final_state"}} {{index . "reason"}}</td></tr>
{{end}}</tbody></table>{{end}}{{end}}
{{if gt (len .Run.Workloads) $.ManyRows}}<p class="muted">{{len .Run.Workloads}} Kueue Workloads: see <code>_workloads.csv</code> (and <code>_clusterqueues.csv</code> for the queues' quota use over time).</p>
{{else}}{{with .Run.Workloads}}<table class="controllers">
<thead><tr><th>Kueue workload</th><th>queue</th><th>cluster queue</th><th>flavors</th><th>created</th><th>quota reserved</th><th>admitted</th><th>finished</th><th>evictions</th><th>preemptions</th><th>state</th></tr></thead>
<tbody>{{range .}}<tr><td>{{index . "namespace"}}/{{index . "name"}}</td><td>{{index . "queue"}}</td><td>{{index . "cluster_queue"}}</td><td>{{index . "flavors"}}</td><td>{{index . "created"}}</td><td>{{index . "quota_reserved"}}</td><td>{{index . "admitted"}}</td><td>{{index . "finished"}}</td><td>{{index . "evictions"}}</td><td>{{index . "preemptions"}}</td><td>{{index . "final_state"}} {{index . "reason"}}</td></tr>
{{end}}</tbody></table>{{end}}{{end}}
{{if gt (len .Run.LaunchedNodes) $.ManyRows}}<p class="muted">{{len .Run.LaunchedNodes}} launched nodes: see <code>_nodes.csv</code>.</p>
{{else}}{{with .Run.LaunchedNodes}}<table class="controllers nodes">
<thead><tr><th>launched node</th><th>instance type</th><th>pool host</th><th>created</th><th>ready</th><th>deleted</th><th>jobs</th><th>cost</th><th>state</th></tr></thead>
<tbody>{{range .}}<tr><td>{{index . "node"}}</td><td>{{index . "instance_type"}}</td><td>{{index . "host"}}</td><td>{{index . "created"}}</td><td>{{index . "ready"}}</td><td>{{index . "deleted"}}</td><td>{{index . "jobs"}}</td><td>{{index . "cost"}}</td><td>{{index . "state"}}</td></tr>
{{end}}</tbody></table>{{end}}{{end}}
{{with .Run.Notes}}<ul class="notes">{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
</div>
{{range $.ChartCells $i}}<div>{{with .}}{{svg .}}{{end}}</div>
{{end}}</div>
{{end}}</div>
<p class="muted">Made by batkube-report. Each chart is also an SVG (and PNG) file beside this page.</p>
</body>
</html>
`
