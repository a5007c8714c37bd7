package campaign

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/batkube/batkube/pkg/launch"
	"github.com/batkube/batkube/pkg/report"
)

// Results are a campaign's finished runs, read for comparison.
type Results struct {
	Campaign *Campaign `json:"-"`
	// Report is the report of the finished runs, with a group per setting.
	Report *report.Report `json:"-"`
	// Runs are the finished runs' figures, Settings each setting's over
	// its finished repetitions, in the matrix's order.
	Runs     []RunResult     `json:"runs"`
	Settings []SettingResult `json:"settings"`
	// Missing are the runs that have not finished (as their folders say).
	Missing []MissingRun `json:"missing,omitempty"`
}

// RunResult is a finished run and its figures.
type RunResult struct {
	Run     Run            `json:"run"`
	Figures report.Figures `json:"figures"`
}

// SettingResult is a setting's figures over its finished runs.
type SettingResult struct {
	Setting   string       `json:"setting"`
	Label     string       `json:"label"`
	Scheduler string       `json:"scheduler"`
	Platform  string       `json:"platform"`
	Workload  string       `json:"workload"`
	Group     report.Group `json:"figures"`
}

// MissingRun is a run without finished outputs.
type MissingRun struct {
	Name  string `json:"name"`
	State string `json:"state"`
	Error string `json:"error,omitempty"` // its summary's, if it failed
}

// Collect reads the finished runs of the campaign in out and makes their
// report and figures. It fails when no run has finished.
func Collect(c *Campaign, out, title string) (*Results, error) {
	res := &Results{Campaign: c}
	var loaded []*report.Run
	var finished []Run
	for _, r := range c.Runs() {
		state, sum, err := Inspect(r, out)
		if err != nil {
			return nil, err
		}
		if state != Finished {
			m := MissingRun{Name: r.Name, State: state.String()}
			if sum != nil {
				m.Error = sum.Error
			}
			res.Missing = append(res.Missing, m)
			continue
		}
		run, err := report.Load(r.Dir(out), report.Inputs{Platform: r.Platform.Files[0], Workloads: r.Workload.Files})
		if err != nil {
			return nil, fmt.Errorf("campaign: run %s: %w", r.Name, err)
		}
		run.Name = r.Name
		loaded = append(loaded, run)
		finished = append(finished, r)
	}
	if len(loaded) == 0 {
		return nil, fmt.Errorf("campaign: no finished run in %s", out)
	}
	rep, err := report.New(title, loaded)
	if err != nil {
		return nil, err
	}
	res.Report = rep
	var order []string
	bySetting := map[string][]Run{}
	for i, r := range finished {
		res.Runs = append(res.Runs, RunResult{Run: r, Figures: rep.Runs[i].Figures})
		if _, seen := bySetting[r.Setting]; !seen {
			order = append(order, r.Setting)
		}
		bySetting[r.Setting] = append(bySetting[r.Setting], r)
	}
	for _, setting := range order {
		runs := bySetting[setting]
		names := make([]string, len(runs))
		for i, r := range runs {
			names[i] = r.Name
		}
		first := runs[0]
		g, err := rep.AddGroup(c.Label(first), names...)
		if err != nil {
			return nil, err
		}
		res.Settings = append(res.Settings, SettingResult{Setting: setting, Label: c.Label(first),
			Scheduler: first.Scheduler.Name, Platform: first.Platform.label(), Workload: first.Workload.label(), Group: g})
	}
	return res, nil
}

// Table writes the settings' figures as a Markdown table: a row per
// setting, mean ± standard deviation over its runs.
func (res *Results) Table(w io.Writer) error {
	c := res.Campaign
	var b strings.Builder
	var head []string
	head = append(head, "scheduler")
	if len(c.Platforms) > 1 {
		head = append(head, "platform")
	}
	if len(c.Workloads) > 1 {
		head = append(head, "workload")
	}
	head = append(head, "runs", "jobs (succeeded)", "makespan (s)", "mean wait (s)", "p95 wait (s)", "mean slowdown", "cpu utilisation", "wall (s)")
	// Runs of batch/v1 Jobs (kube-controller-manager, Kueue): their wait
	// from the Job's creation, queueing included.
	jobWaits := false
	for _, s := range res.Settings {
		jobWaits = jobWaits || s.Group.HasJobWaiting
	}
	if jobWaits {
		head = append(head, "mean Job wait (s)", "p95 Job wait (s)")
	}
	// Runs with Karpenter: the nodes it launched and what they cost.
	nodes := false
	for _, s := range res.Settings {
		nodes = nodes || s.Group.HasNodes
	}
	if nodes {
		head = append(head, "nodes launched", "node-hours", "cost")
	}
	// Runs of Batsim with --energy: the joules it says they consumed.
	energy := false
	for _, s := range res.Settings {
		energy = energy || s.Group.HasEnergy
	}
	if energy {
		head = append(head, "energy (J)")
	}
	if len(c.Platforms) == 1 || len(c.Workloads) == 1 {
		var parts []string
		if len(c.Platforms) == 1 {
			parts = append(parts, "platform `"+c.Platforms[0].Files[0]+"`")
		}
		if len(c.Workloads) == 1 {
			parts = append(parts, "workload `"+strings.Join(c.Workloads[0].Files, "`, `")+"`")
		}
		fmt.Fprintf(&b, "%s.\n\n", upperFirst(strings.Join(parts, ", ")))
	}
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for _, s := range res.Settings {
		g := s.Group
		n := len(g.Runs)
		row := []string{s.Scheduler}
		if len(c.Platforms) > 1 {
			row = append(row, s.Platform)
		}
		if len(c.Workloads) > 1 {
			row = append(row, s.Workload)
		}
		cpu, wall := "—", "—"
		if g.HasUtilisation {
			cpu = spread(launch.Spread{Mean: 100 * g.CPUUtilisation.Mean, StdDev: 100 * g.CPUUtilisation.StdDev}, n, "%.1f") + " %"
		}
		if g.HasWall {
			wall = spread(g.Wall, n, "%.1f")
		}
		row = append(row, fmt.Sprint(n), spread(g.Jobs, n, "%.0f")+" ("+spread(g.Succeeded, n, "%.0f")+")",
			spread(g.Makespan, n, "%.1f"), spread(g.MeanWaiting, n, "%.1f"), spread(g.P95Waiting, n, "%.1f"),
			spread(g.MeanSlowdown, n, "%.2f"), cpu, wall)
		if jobWaits {
			if g.HasJobWaiting {
				row = append(row, spread(g.MeanJobWaiting, n, "%.1f"), spread(g.P95JobWaiting, n, "%.1f"))
			} else {
				row = append(row, "—", "—")
			}
		}
		if nodes {
			if g.HasNodes {
				row = append(row, spread(g.Nodes, n, "%.1f"), spread(g.NodeHours, n, "%.3f"), spread(g.Cost, n, "%.4f"))
			} else {
				row = append(row, "—", "—", "—")
			}
		}
		if energy {
			if g.HasEnergy {
				row = append(row, spread(g.Energy, n, "%.0f"))
			} else {
				row = append(row, "—")
			}
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
	}
	if n := len(res.Runs); n > 1 || len(res.Missing) > 0 {
		fmt.Fprintf(&b, "\n%d finished runs; mean ± sample standard deviation over a setting's runs.", n)
		if m := len(res.Missing); m > 0 {
			names := make([]string, m)
			for i, r := range res.Missing {
				names[i] = r.Name + " (" + r.State + ")"
			}
			fmt.Fprintf(&b, " Not in the table: %s.", strings.Join(names, ", "))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Write writes the comparison into out: campaign.md (the table),
// campaign.json (every figure), report.html and its charts
// (report-charts/, PNG at dpi when dpi > 0).
func (res *Results) Write(out string, dpi int) error {
	var table strings.Builder
	if err := res.Table(&table); err != nil {
		return err
	}
	return errors.Join(
		os.WriteFile(filepath.Join(out, "campaign.md"), []byte(table.String()), 0o644),
		launch.WriteJSON(filepath.Join(out, "campaign.json"), res),
		res.Report.Write(filepath.Join(out, "report.html"), filepath.Join(out, "report-charts"), dpi),
	)
}

// spread formats a spread: "mean ± standard deviation", the mean alone
// for one run.
func spread(s launch.Spread, n int, format string) string {
	if n <= 1 {
		return fmt.Sprintf(format, s.Mean)
	}
	return fmt.Sprintf(format+" ± "+format, s.Mean, s.StdDev)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
