package broker

import (
	"encoding/csv"
	"io"
	"strconv"
)

// The nodes' log (_nodes.csv): one row per node an autoscaler launched
// (pool.go), written at the end of the run, in creation order: its name
// and instance type, the pool host it was mapped onto (empty: none was
// free), the simulated instants it was created, became Ready and was
// deleted (empty: it did not happen), its lifetime (to its deletion, or
// to the end of the run), its price per hour and what it cost (price ×
// lifetime), how many jobs started on it, and its state at the end
// (deleted, running, or unmapped).

var nodesColumns = columns[nodeRow]{
	{"node", func(r nodeRow) string { return r.name }},
	{"instance_type", func(r nodeRow) string { return r.instanceType }},
	{"host", func(r nodeRow) string { return r.host.Name }},
	{"resource_id", func(r nodeRow) string {
		if !r.mapped {
			return ""
		}
		return strconv.Itoa(r.host.ID)
	}},
	{"created", func(r nodeRow) string { return seconds(r.created) }},
	{"ready", func(r nodeRow) string { return seconds(r.ready) }},
	{"deleted", func(r nodeRow) string { return seconds(r.deleted) }},
	{"lifetime", func(r nodeRow) string { return seconds(r.lifetime()) }},
	{"price", func(r nodeRow) string { return strconv.FormatFloat(r.price, 'f', -1, 64) }},
	{"cost", func(r nodeRow) string { return strconv.FormatFloat(r.price*r.lifetime()/3600, 'f', 6, 64) }},
	{"jobs", func(r nodeRow) string { return strconv.Itoa(r.jobs) }},
	{"state", func(r nodeRow) string { return r.state() }},
}

// nodeRow is a launched node at the end of the run (end: its instant).
type nodeRow struct {
	*launchedNode
	end float64
}

func (r nodeRow) lifetime() float64 {
	if r.deleted >= 0 {
		return r.deleted - r.created
	}
	return r.end - r.created
}

func (r nodeRow) state() string {
	switch {
	case r.deleted >= 0:
		return "deleted"
	case !r.mapped:
		return "unmapped"
	}
	return "running"
}

// writeNodes writes the nodes' log to out (nil: off) at the run's end.
func (p *poolState) writeNodes(out io.Writer, end float64) error {
	if out == nil {
		return nil
	}
	w := csv.NewWriter(out)
	_ = w.Write(nodesColumns.header())
	for _, ln := range p.order {
		_ = w.Write(nodesColumns.row(nodeRow{ln, end}))
	}
	w.Flush()
	return w.Error()
}
