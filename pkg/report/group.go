package report

import (
	"fmt"
	"html/template"
	"os"
	"path/filepath"

	"github.com/batkube/batkube/pkg/launch"
)

// Group is runs of one setting — repetitions of one scheduler on one
// platform and workload, a cell of a campaign's matrix — with their
// figures as mean ± standard deviation over the runs.
type Group struct {
	Name string
	Runs []string // the runs' names, in the report's order
	// Spreads of the runs' Figures.
	Jobs, Succeeded                                 launch.Spread
	Makespan, MeanWaiting, P95Waiting, MeanSlowdown launch.Spread
	CPUUtilisation, MemoryUtilisation               launch.Spread
	// HasUtilisation says whether every run has its utilisation.
	HasUtilisation bool
	// MeanJobWaiting and P95JobWaiting are the spreads of the runs'
	// Figures; HasJobWaiting says whether every run has batch/v1 Jobs.
	MeanJobWaiting, P95JobWaiting launch.Spread
	HasJobWaiting                 bool
	// Nodes, NodeHours and Cost are the nodes an autoscaler launched, their
	// lifetimes in hours and what they cost (summary.json, from
	// _nodes.csv); HasNodes says whether every run has them.
	Nodes, NodeHours, Cost launch.Spread
	HasNodes               bool
	// Energy is the joules Batsim run with --energy says the runs
	// consumed (summary.json, from _schedule.csv); HasEnergy says whether
	// every run has it.
	Energy    launch.Spread
	HasEnergy bool
	// Wall is the runs' wall-clock time in seconds (summary.json); HasWall
	// says whether every run has one.
	Wall    launch.Spread
	HasWall bool
}

// AddGroup adds to the report the group of the named runs (at least one,
// each a run of the report), shown in a table of their means and spreads
// above the runs'.
func (rep *Report) AddGroup(name string, runs ...string) (Group, error) {
	g := Group{Name: name, HasUtilisation: true, HasWall: true, HasJobWaiting: true, HasNodes: true, HasEnergy: true}
	if len(runs) == 0 {
		return g, fmt.Errorf("report: group %s: no run", name)
	}
	var jobs, succeeded, makespan, waiting, p95, slowdown, cpu, mem, wall, jobWaiting, jobP95 []float64
	var nodes, nodeHours, cost, energy []float64
	for _, want := range runs {
		var found *RunReport
		for i := range rep.Runs {
			if rep.Runs[i].Run.Name == want {
				found = &rep.Runs[i]
			}
		}
		if found == nil {
			return g, fmt.Errorf("report: group %s: no run named %s", name, want)
		}
		f := found.Figures
		g.Runs = append(g.Runs, want)
		jobs, succeeded = append(jobs, float64(f.Jobs)), append(succeeded, float64(f.Succeeded))
		makespan, waiting = append(makespan, f.Makespan), append(waiting, f.MeanWaiting)
		p95, slowdown = append(p95, f.P95Waiting), append(slowdown, f.MeanSlowdown)
		cpu, mem = append(cpu, f.CPUUtilisation), append(mem, f.MemoryUtilisation)
		g.HasUtilisation = g.HasUtilisation && f.HasUtilisation
		g.HasJobWaiting = g.HasJobWaiting && f.KubeJobs > 0
		jobWaiting, jobP95 = append(jobWaiting, f.MeanJobWaiting), append(jobP95, f.P95JobWaiting)
		if s := found.Run.Summary; s != nil && s.Wall > 0 {
			wall = append(wall, s.Wall.Seconds())
		} else {
			g.HasWall = false
		}
		if s := found.Run.Summary; s != nil && s.Nodes != nil {
			nodes, nodeHours, cost = append(nodes, float64(s.Nodes.Launched)), append(nodeHours, s.Nodes.NodeHours), append(cost, s.Nodes.Cost)
		} else {
			g.HasNodes = false
		}
		if s := found.Run.Summary; s != nil && s.Energy != nil {
			energy = append(energy, s.Energy.Joules)
		} else {
			g.HasEnergy = false
		}
	}
	g.Jobs, g.Succeeded = launch.SpreadOf(jobs), launch.SpreadOf(succeeded)
	g.Makespan, g.MeanWaiting = launch.SpreadOf(makespan), launch.SpreadOf(waiting)
	g.P95Waiting, g.MeanSlowdown = launch.SpreadOf(p95), launch.SpreadOf(slowdown)
	g.CPUUtilisation, g.MemoryUtilisation = launch.SpreadOf(cpu), launch.SpreadOf(mem)
	if g.HasWall {
		g.Wall = launch.SpreadOf(wall)
	}
	if g.HasJobWaiting {
		g.MeanJobWaiting, g.P95JobWaiting = launch.SpreadOf(jobWaiting), launch.SpreadOf(jobP95)
	}
	if g.HasNodes {
		g.Nodes, g.NodeHours, g.Cost = launch.SpreadOf(nodes), launch.SpreadOf(nodeHours), launch.SpreadOf(cost)
	}
	if g.HasEnergy {
		g.Energy = launch.SpreadOf(energy)
	}
	rep.Groups = append(rep.Groups, g)
	return g, nil
}

// Write writes the report's page to htmlPath and its charts' files to
// chartsDir (PNG too with dpi > 0), creating the folders.
func (rep *Report) Write(htmlPath, chartsDir string, dpi int) error {
	if err := os.MkdirAll(filepath.Dir(htmlPath), 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := rep.WriteCharts(chartsDir, dpi); err != nil {
		return err
	}
	f, err := os.Create(htmlPath)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := rep.WriteHTML(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// spread formats a spread for the page: "mean ± standard deviation" with
// format, the mean alone for a single run.
func spread(s launch.Spread, n int, format string) template.HTML {
	return spreadWithUnit(s, n, format, "")
}

// spreadWithUnit formats a spread followed by its unit: the standard
// deviation in a span of class "sd" that a narrow column puts whole on a
// line of its own.
func spreadWithUnit(s launch.Spread, n int, format, unit string) template.HTML {
	if n <= 1 {
		return template.HTML(template.HTMLEscapeString(fmt.Sprintf(format, s.Mean) + unit))
	}
	mean := template.HTMLEscapeString(fmt.Sprintf(format, s.Mean))
	sd := template.HTMLEscapeString(fmt.Sprintf("± "+format, s.StdDev) + unit)
	return template.HTML(mean + ` <span class="sd">` + sd + `</span>`)
}
