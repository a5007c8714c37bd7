package outputs

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestNodesSummary: _nodes.csv read back and summed up: launched, deleted
// and unmapped nodes, the most at once (a node deleted at the instant
// another is created does not count twice), node-hours and cost.
func TestNodesSummary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "_nodes.csv")
	csv := "node,instance_type,host,resource_id,created,ready,deleted,lifetime,price,cost,jobs,state\n" +
		"a,small,pool-0,1,0.000000,30.000000,3600.000000,3600.000000,0.5,0.500000,2,deleted\n" +
		"b,small,,,10.000000,,,3590.000000,0,0.000000,0,unmapped\n" +
		"c,big,pool-1,2,3600.000000,3630.000000,,3600.000000,2,2.000000,1,running\n"
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	nodes, err := ReadNodes(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 3 || nodes[1].ResourceID != -1 || nodes[0].ResourceID != 1 || !math.IsNaN(nodes[2].Deleted) || nodes[0].Jobs != 2 {
		t.Fatalf("read %+v", nodes)
	}
	s := SummariseNodes(nodes)
	if s.Launched != 3 || s.Deleted != 1 || s.Unmapped != 1 || s.Peak != 2 || math.Abs(s.NodeHours-(3600+3590+3600)/3600.0) > 1e-9 || s.Cost != 2.5 {
		t.Errorf("summary %+v, want 3 launched, 1 deleted, 1 unmapped, peak 2, 2.997 node-hours, cost 2.5", s)
	}
}
