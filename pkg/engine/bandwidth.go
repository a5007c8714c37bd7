package engine

// The links' bandwidth as the flows of parallel tasks share it.

// constraint is the key of the bandwidth that a use of a link shares with
// others: the link's, or one way's of a split-duplex link.
func (u linkUse) constraint() int {
	if u.down && u.link.policy == linkSplitDuplex {
		return 2*u.link.id + 1
	}
	return 2 * u.link.id
}
