package openb

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestRankNodes: every node once, in an order the seed draws, each name
// prefixed with its rank so that the names sort in that order; the same
// seed the same order, another seed another; the list written reads back.
func TestRankNodes(t *testing.T) {
	var nodes []Node
	for i := range 12 {
		nodes = append(nodes, Node{Name: fmt.Sprintf("node-%02d", i), CPUMilli: int64(1000 * (i + 1)), MemMiB: 1024, GPUs: i % 3, Model: []string{"", "T4", "V100"}[i%3]})
	}
	ranked := RankNodes(nodes, 42)
	if len(ranked) != len(nodes) {
		t.Fatalf("%d nodes ranked of %d", len(ranked), len(nodes))
	}
	names := make([]string, len(ranked))
	seen := map[string]bool{}
	for i, n := range ranked {
		names[i] = n.Name
		prefix := fmt.Sprintf("%04d-", i)
		orig, ok := strings.CutPrefix(n.Name, prefix)
		if !ok {
			t.Fatalf("rank %d named %q: want the prefix %q", i, n.Name, prefix)
		}
		j := slices.IndexFunc(nodes, func(m Node) bool { return m.Name == orig })
		if j < 0 || seen[orig] {
			t.Fatalf("rank %d: %q is not a node of the list, or comes twice", i, orig)
		}
		seen[orig] = true
		if want := nodes[j]; n.CPUMilli != want.CPUMilli || n.GPUs != want.GPUs || n.Model != want.Model {
			t.Errorf("rank %d (%s): %+v, want the node's own resources %+v", i, orig, n, want)
		}
	}
	if !sort.StringsAreSorted(names) {
		t.Errorf("ranked names do not sort in rank order: %v", names)
	}
	if nodes[0].Name != "node-00" {
		t.Errorf("RankNodes renamed its argument's nodes: %s", nodes[0].Name)
	}
	if again := RankNodes(nodes, 42); !slices.Equal(again, ranked) {
		t.Error("the same seed gave two orders")
	}
	if other := RankNodes(nodes, 7); slices.Equal(other, ranked) {
		t.Error("seeds 42 and 7 gave the same order")
	}
	var b bytes.Buffer
	if err := WriteNodes(&b, ranked); err != nil {
		t.Fatal(err)
	}
	back, err := ReadNodes(&b)
	if err != nil {
		t.Fatalf("the written list does not read back: %v", err)
	}
	if !slices.Equal(back, ranked) {
		t.Errorf("read back %+v, want %+v", back, ranked)
	}
}
