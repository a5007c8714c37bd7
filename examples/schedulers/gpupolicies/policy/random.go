package policy

import (
	"math/rand/v2"
	"slices"
)

// DefaultSeed is the seed of the Random policy's draws unless told.
const DefaultSeed = 1

// Draws are the Random policy's choices of a node: each draw takes one
// of the feasible nodes' names uniformly, from a seeded generator, so
// that the same seed and the same feasible nodes in the same order of
// draws give the same nodes (the names are sorted first: the order in
// which kube-scheduler lists feasible nodes varies from run to run). Not
// safe for concurrent use.
type Draws struct {
	rng *rand.Rand
}

// NewDraws returns the draws of a seed.
func NewDraws(seed uint64) *Draws {
	return &Draws{rng: rand.New(rand.NewPCG(seed, 0x72616e646f6d))} // "random"
}

// Pick draws one of the names ("" when there is none). names is left as
// is.
func (d *Draws) Pick(names []string) string {
	if len(names) == 0 {
		return ""
	}
	sorted := slices.Sorted(slices.Values(names))
	return sorted[d.rng.IntN(len(sorted))]
}
