package outputs

import (
	"cmp"
	"math"
	"slices"
)

// Node is a row of _nodes.csv: a node an autoscaler launched. Instants
// that did not happen are NaN.
type Node struct {
	Name, InstanceType, Host string
	ResourceID               int // -1: mapped onto no pool host
	Created, Ready, Deleted  float64
	Lifetime, Price, Cost    float64
	Jobs                     int
	State                    string // deleted, running or unmapped
}

// ReadNodes reads _nodes.csv.
func ReadNodes(path string) ([]Node, error) {
	return readRows(path, NodesColumns, func(c *cells) Node {
		n := Node{Name: c.row["node"], InstanceType: c.row["instance_type"], Host: c.row["host"], State: c.row["state"], ResourceID: -1,
			Created: c.instant("created"), Ready: c.instant("ready"), Deleted: c.instant("deleted"),
			Lifetime: c.instant("lifetime"), Price: c.instant("price"), Cost: c.instant("cost"),
			Jobs: c.whole("jobs")}
		if c.row["resource_id"] != "" {
			n.ResourceID = c.whole("resource_id")
		}
		return n
	})
}

// NodesSummary sums up the nodes an autoscaler launched.
type NodesSummary struct {
	Launched int `json:"launched"`
	Deleted  int `json:"deleted"`
	Unmapped int `json:"unmapped"`
	// Peak is the most nodes that existed at once.
	Peak int `json:"peak"`
	// NodeHours are the nodes' lifetimes summed, in hours; Cost their
	// prices times their lifetimes.
	NodeHours float64 `json:"nodeHours"`
	Cost      float64 `json:"cost"`
}

// SummariseNodes sums up _nodes.csv's rows.
func SummariseNodes(nodes []Node) NodesSummary {
	s := NodesSummary{Launched: len(nodes)}
	type change struct {
		at    float64
		delta int
	}
	var changes []change
	for _, n := range nodes {
		switch n.State {
		case "deleted":
			s.Deleted++
		case "unmapped":
			s.Unmapped++
		}
		s.NodeHours += n.Lifetime / 3600
		s.Cost += n.Cost
		changes = append(changes, change{n.Created, 1})
		if !math.IsNaN(n.Deleted) {
			changes = append(changes, change{n.Deleted, -1})
		}
	}
	// Deletions before creations at one instant: a node replaced at an
	// instant is not two at once.
	slices.SortFunc(changes, func(a, b change) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.delta, b.delta)) })
	cur := 0
	for _, c := range changes {
		cur += c.delta
		s.Peak = max(s.Peak, cur)
	}
	return s
}
