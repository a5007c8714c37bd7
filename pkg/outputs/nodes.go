package outputs

import (
	"fmt"
	"strconv"
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
	rows, err := readTable(path, NodesColumns)
	if err != nil {
		return nil, err
	}
	out := make([]Node, 0, len(rows))
	for i, r := range rows {
		n := Node{Name: r["node"], InstanceType: r["instance_type"], Host: r["host"], State: r["state"], ResourceID: -1}
		var errs []error
		for col, v := range map[string]*float64{"created": &n.Created, "ready": &n.Ready, "deleted": &n.Deleted,
			"lifetime": &n.Lifetime, "price": &n.Price, "cost": &n.Cost} {
			var err error
			if *v, err = optionalSeconds(r[col]); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", col, err))
			}
		}
		var err error
		if n.Jobs, err = strconv.Atoi(r["jobs"]); err != nil {
			errs = append(errs, fmt.Errorf("jobs: %w", err))
		}
		if id := r["resource_id"]; id != "" {
			if n.ResourceID, err = strconv.Atoi(id); err != nil {
				errs = append(errs, fmt.Errorf("resource_id: %w", err))
			}
		}
		if len(errs) > 0 {
			return nil, fmt.Errorf("outputs: %s: row %d: %v", path, i+2, errs)
		}
		out = append(out, n)
	}
	return out, nil
}
