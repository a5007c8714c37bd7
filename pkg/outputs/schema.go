package outputs

import (
	"fmt"
	"slices"
)

// The columns of the CSV files Batkube writes beside Batsim's, in order:
// the one statement of their schemas. The broker writes them (each file's
// column table in pkg/broker must give these names, its tests check it)
// and the readers here read them by these names. Times are simulated
// seconds; an empty cell is an instant that did not happen.
var (
	// PodsColumns: _pods.csv, a row per pod of a Batsim job (podscsv.go
	// in pkg/broker); devices are the DRA devices its claims held when it
	// started (FormatDevices, ParseDevices; written by poddevices.go).
	PodsColumns = []string{"job_id", "namespace", "pod", "node", "created", "first_attempt", "bound", "started", "finished", "phase", "reason", "failed_scheduling", "preempted", "devices"}
	// ControllersColumns: _controllers.csv, a row per object a user
	// created for controllers to run (a batch/v1 Job), from its creation
	// (controllerscsv.go).
	ControllersColumns = []string{"kind", "namespace", "name", "created", "first_start", "last_end", "pods", "succeeded", "failed", "killed", "final_state", "reason"}
	// WorkloadsColumns: _workloads.csv, a row per Kueue Workload
	// (workloadscsv.go).
	WorkloadsColumns = []string{"namespace", "name", "owner", "queue", "cluster_queue", "flavors", "usage", "priority", "created", "quota_reserved", "admitted", "finished", "evictions", "preemptions", "final_state", "reason"}
	// ClusterQueuesColumns: _clusterqueues.csv, a row per change of a
	// Kueue ClusterQueue's status (clusterqueuescsv.go).
	ClusterQueuesColumns = []string{"time", "cluster_queue", "nominal", "usage", "reserving", "admitted", "pending"}
	// NodesColumns: _nodes.csv, a row per node an autoscaler (Karpenter)
	// launched, mapped onto a pool host or not (nodescsv.go).
	NodesColumns = []string{"node", "instance_type", "host", "resource_id", "created", "ready", "deleted", "lifetime", "price", "cost", "jobs", "state"}
)

// readTable reads a CSV file of one of the schemas above into one map per
// row, after checking that its header has every column of the schema.
func readTable(path string, schema []string) ([]map[string]string, error) {
	head, rows, err := readCSV(path)
	if err != nil {
		return nil, err
	}
	for _, col := range schema {
		if !slices.Contains(head, col) {
			return nil, fmt.Errorf("outputs: %s: no column %q (header %q): not a file of this Batkube version", path, col, head)
		}
	}
	return rows, nil
}
