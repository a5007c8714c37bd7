package store

import (
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ListOptions select the objects of a List and the page.
type ListOptions struct {
	Selection
	// Limit caps the page size (0: no paging); Continue is the token of the
	// previous page. All pages of one list show the first page's snapshot.
	Limit    int64
	Continue string
	// ResourceVersion with Exact lists the state as of that RV (410 Gone if
	// older than the resource's history). Without Exact it is a lower bound:
	// the current state is listed, and an RV the store has not reached is an
	// error.
	ResourceVersion uint64
	Exact           bool
}

// ListResult is one page of a list.
type ListResult struct {
	Items    []*Stored // in key order: namespace, then name
	RV       uint64    // the snapshot's resourceVersion
	Continue string    // set when more items follow
	// RemainingItemCount counts the items after this page; only set with
	// Continue and without selectors, as the apiserver does.
	RemainingItemCount *int64
}

const (
	continueExpired = "The provided continue parameter is too old to display a consistent list result. " +
		"You can start a new list without the continue parameter, or use the continue token in this response " +
		"to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent " +
		"list - objects that were created, modified, or deleted between the time the first chunk was returned " +
		"and now may show up in the list."
)

// List returns the objects of gr matching opts. Errors: BadRequest for a
// malformed continue token, 410 Expired for a snapshot older than gr's history
// (an expired continue carries a token to resume at the current state),
// Timeout for a resourceVersion the store has not reached.
func (s *Store) List(gr schema.GroupResource, opts ListOptions) (ListResult, error) {
	pred := newPredicate(gr, opts.Selection, s.fields)
	s.mu.RLock()
	defer s.mu.RUnlock()
	current := s.last
	at := current
	var after *key
	switch {
	case opts.Continue != "":
		tok, err := decodeContinue(opts.Continue)
		if err != nil {
			return ListResult{}, apierrors.NewBadRequest(fmt.Sprintf("invalid continue token: %v", err))
		}
		after = &tok.after
		if tok.rv != latestRV {
			at = uint64(tok.rv)
		}
		if at > current {
			return ListResult{}, apierrors.NewBadRequest(fmt.Sprintf(
				"invalid continue token: %v: resourceVersion %d is newer than the server's %d", errInvalidContinue, at, current))
		}
		if at < s.compactedLocked(gr) {
			return ListResult{}, expiredContinue(tok.after)
		}
	case opts.Exact:
		at = opts.ResourceVersion
		if at > current {
			return ListResult{}, tooLarge(at, current)
		}
		if c := s.compactedLocked(gr); at < c {
			return ListResult{}, tooOld(at, c)
		}
	case opts.ResourceVersion > current:
		return ListResult{}, tooLarge(opts.ResourceVersion, current)
	}

	res := ListResult{RV: at}
	if t := s.objects[gr]; t != nil && opts.Namespace == "" && !pred.selects() {
		n := int64(t.Len())
		if opts.Limit > 0 {
			n = min(n, opts.Limit)
		}
		res.Items = make([]*Stored, 0, n)
	}
	var last key
	var more bool
	var remaining int64
	s.scanLocked(gr, at, opts.Namespace, after, func(k key, st *Stored) bool {
		if !pred.matches(st) {
			return true
		}
		if opts.Limit > 0 && int64(len(res.Items)) == opts.Limit {
			more = true
			remaining++
			return !pred.selects() // with selectors, knowing that one more follows is enough
		}
		res.Items = append(res.Items, st)
		last = k
		return true
	})
	if more {
		tok, err := encodeContinue(continueToken{rv: int64(at), after: last})
		if err != nil {
			return ListResult{}, apierrors.NewInternalError(err)
		}
		res.Continue = tok
		if !pred.selects() {
			res.RemainingItemCount = &remaining
		}
	}
	return res, nil
}

// expiredContinue is the 410 of a continue token older than its resource's
// history; it carries a token that continues after the same key at the
// current state.
func expiredContinue(after key) error {
	err := apierrors.NewResourceExpired(continueExpired)
	if tok, encErr := encodeContinue(continueToken{rv: latestRV, after: after}); encErr == nil {
		err.ErrStatus.ListMeta.Continue = tok
	}
	return err
}

// scanLocked calls yield, in key order, for each object of gr that existed at
// resourceVersion at (compactedLocked(gr) <= at <= current) in namespace (all
// when "") with a key after `after` (all when nil), until yield returns false.
//
// The state at `at` is rebuilt from gr's history, without keeping old copies:
// an object's state at `at` is the previous state of its first write after
// `at`, if there is one, else its current state.
func (s *Store) scanLocked(gr schema.GroupResource, at uint64, namespace string, after *key, yield func(key, *Stored) bool) {
	t := s.objects[gr]
	var past map[key]*Stored // state at `at` of the keys written since (nil: absent)
	var gone []entry         // keys deleted since `at` that existed then, in key order
	h := s.histories[gr]
	if from, to := h.afterLocked(at); from < to {
		past = make(map[key]*Stored)
		for seq := from; seq < to; seq++ {
			r := h.at(seq)
			if namespace != "" && r.key.namespace != namespace {
				continue
			}
			if _, seen := past[r.key]; !seen {
				past[r.key] = r.prev
			}
		}
		for k, prev := range past {
			if prev == nil || (after != nil && !after.less(k)) {
				continue
			}
			if t != nil {
				if _, ok := t.Get(entry{key: k}); ok {
					continue
				}
			}
			gone = append(gone, entry{key: k, obj: prev})
		}
		slices.SortFunc(gone, func(a, b entry) int { return a.key.compare(b.key) })
	}

	emit := func(e entry) bool {
		if past != nil {
			if p, ok := past[e.key]; ok {
				e.obj = p
			}
		}
		return e.obj == nil || yield(e.key, e.obj)
	}
	stopped := false
	if t != nil {
		from := key{namespace: namespace}
		if after != nil && from.less(*after) {
			from = *after
		}
		t.AscendGreaterOrEqual(entry{key: from}, func(e entry) bool {
			if namespace != "" && e.key.namespace != namespace {
				return false
			}
			if after != nil && !after.less(e.key) {
				return true
			}
			for len(gone) > 0 && gone[0].key.less(e.key) {
				if !emit(gone[0]) {
					stopped = true
					return false
				}
				gone = gone[1:]
			}
			if !emit(e) {
				stopped = true
				return false
			}
			return true
		})
	}
	for _, e := range gone {
		if stopped || !emit(e) {
			return
		}
	}
}
