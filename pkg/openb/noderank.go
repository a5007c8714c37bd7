package openb

import (
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
)

// NodesFile is where the converter writes the node list its platform
// follows when RankNodes reordered and renamed the nodes, for the tools
// that read a node list beside a run (gpu-policy-replay).
const NodesFile = "nodes.csv"

// RankNodes returns the nodes in an order drawn with the seed, each name
// prefixed with its rank ("0000-", "0001-"...: as many digits as the
// largest rank needs, at least four), so that the names sort in that
// order. The paper's simulator does the same before each experiment, and
// breaks ties among equally scored nodes by the smallest name: a tie goes
// to the first node in a random order fixed for the whole run. kube-
// scheduler 1.37 without extenders does not draw either: it pops the best
// of a heap built over the feasible nodes in the order its node list
// gives them (the order the nodes were created or, for a scheduler that
// lists them, their names' order; with ranked names both are the rank's),
// so a tie goes to a node that order decides (not always its first). Left
// in the trace's order, ties go to the trace's early nodes, which are
// grouped by model and size, and policies that leave many ties
// (GpuClustering, GpuPacking) pack tighter than the paper's.
func RankNodes(nodes []Node, seed uint64) []Node {
	rng := rand.New(rand.NewPCG(seed, 0x6e6f646573)) // "nodes"
	out := make([]Node, len(nodes))
	for i, j := range rng.Perm(len(nodes)) {
		out[i] = nodes[j]
	}
	width := max(4, len(strconv.Itoa(len(nodes)-1)))
	for i := range out {
		out[i].Name = fmt.Sprintf("%0*d-%s", width, i, out[i].Name)
	}
	return out
}

// WriteNodes writes a node list in the trace's format (sn, cpu_milli,
// memory_mib, gpu, model), which ReadNodes reads back.
func WriteNodes(w io.Writer, nodes []Node) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(nodeColumns)
	for _, n := range nodes {
		_ = cw.Write([]string{n.Name, strconv.FormatInt(n.CPUMilli, 10), strconv.FormatInt(n.MemMiB, 10), strconv.Itoa(n.GPUs), n.Model})
	}
	cw.Flush()
	return cw.Error()
}
