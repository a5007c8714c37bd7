package broker

import (
	"slices"
	"testing"

	"github.com/batkube/batkube/pkg/outputs"
)

// TestCSVColumnsAreTheSchemas: each CSV file's column table writes the
// header its schema in pkg/outputs states, which the readers read.
func TestCSVColumnsAreTheSchemas(t *testing.T) {
	for _, f := range []struct {
		file           string
		header, schema []string
	}{
		{"_pods.csv", podsColumns.header(), outputs.PodsColumns},
		{"_controllers.csv", controllersColumns.header(), outputs.ControllersColumns},
		{"_workloads.csv", workloadsColumns.header(), outputs.WorkloadsColumns},
		{"_clusterqueues.csv", clusterQueuesColumns.header(), outputs.ClusterQueuesColumns},
		{"_nodes.csv", nodesColumns.header(), outputs.NodesColumns},
	} {
		if !slices.Equal(f.header, f.schema) {
			t.Errorf("%s: the broker writes %q, the schema says %q", f.file, f.header, f.schema)
		}
	}
}
