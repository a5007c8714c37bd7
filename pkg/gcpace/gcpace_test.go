package gcpace

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

func TestHeadroomGrowsWithTheBytesAllocated(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct{ allocs, most, want uint64 }{
		{0, 64 * mib, minHeap},                 // nothing allocated yet: the heap minimum
		{16 * mib, 64 * mib, minHeap},          // an eighth is under it
		{80 * mib, 64 * mib, 10 * mib},         // a short run: an eighth
		{512 * mib, 64 * mib, 64 * mib},        // all of it
		{100 * 1024 * mib, 64 * mib, 64 * mib}, // and no more
		{100 * 1024 * mib, 2 * mib, 2 * mib},   // a headroom under the minimum stays as asked
	} {
		if got := headroomFor(c.allocs, c.most); got != c.want {
			t.Errorf("%d MiB allocated, at most %d MiB: headroom %d MiB, want %d MiB", c.allocs/mib, c.most/mib, got/mib, c.want/mib)
		}
	}
}

// TestPacerStartsWithASmallHeadroom: a process that has allocated little
// gets a headroom of an eighth of it, not the whole one asked for.
func TestPacerStartsWithASmallHeadroom(t *testing.T) {
	base := debug.SetGCPercent(100)
	defer debug.SetGCPercent(base)
	runtime.GC()
	s := []metrics.Sample{{Name: allocated}, {Name: liveHeap}}
	metrics.Read(s)
	allocs, live := s[0].Value.Uint64(), s[1].Value.Uint64()
	const most = 1 << 40 // far more than an eighth of what a test allocates
	p := Start(most)
	defer p.Stop()
	if want := percentFor(live, headroomFor(allocs, most), 100); p.Percent() > want+want/2 {
		t.Errorf("GC percent %d after %d MiB allocated, want about %d (a headroom of an eighth), not %d (the whole headroom)",
			p.Percent(), allocs>>20, want, percentFor(live, most, 100))
	}
}

// allocateAtLeast makes the heap's count of bytes allocated grow by n.
func allocateAtLeast(n uint64) {
	s := []metrics.Sample{{Name: allocated}}
	metrics.Read(s)
	for target := s[0].Value.Uint64() + n; s[0].Value.Uint64() < target; metrics.Read(s) {
		sink = make([]byte, 1<<20)
	}
	sink = nil
}

var sink []byte

func TestPercentForKeepsTheHeadroom(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, headroom uint64
		base, want     int
	}{
		{16 * mib, 64 * mib, 100, 400},                // small heap: the headroom rules
		{64 * mib, 64 * mib, 100, 100},                // the headroom is GOGC's doubling
		{512 * mib, 64 * mib, 100, 100},               // big heap: GOGC rules
		{512 * mib, 64 * mib, 200, 200},               // and a higher GOGC stays
		{0, 64 * mib, 100, 1600},                      // nothing live yet: the heap minimum (4 MiB × 16) is the headroom
		{1000, 64 * mib, 100, 1600},                   // the same for a nearly empty heap
		{4 * mib, 1024 * 1024 * mib, 100, maxPercent}, // bounded
	} {
		if got := percentFor(c.live, c.headroom, c.base); got != c.want {
			t.Errorf("live %d, headroom %d, base %d: %d %%, want %d %%", c.live, c.headroom, c.base, got, c.want)
		}
	}
}

// TestPacerFollowsTheLiveHeapAndRestores: with a small live heap the pacer
// raises the GC percent, it lowers it back to GOGC's as the live heap grows
// past the headroom, and Stop restores GOGC. (tune is called directly: the
// cleanup that calls it after each collection runs on the runtime's own
// goroutine, at no instant a test could wait for.)
func TestPacerFollowsTheLiveHeapAndRestores(t *testing.T) {
	const headroom = 16 << 20
	p := startFromGOGC100(t, headroom)
	if got := p.Percent(); got <= 100 {
		t.Errorf("GC percent %d with a test's small heap and 16 MiB of headroom, want more than 100", got)
	}
	ballast := make([]byte, 4*headroom) // live, and well above the headroom
	runtime.GC()
	p.tune()
	if got := p.Percent(); got != 100 {
		t.Errorf("GC percent %d with %d MiB live and 16 MiB of headroom, want GOGC's 100", got, len(ballast)>>20)
	}
	runtime.KeepAlive(ballast)
	if got := debug.SetGCPercent(-1); got != p.Percent() {
		t.Errorf("the runtime's GC percent is %d, the pacer's %d", got, p.Percent())
	}
	debug.SetGCPercent(p.Percent())
	// The limit follows the live heap: the ballast and the test's own
	// few MiB.
	if got, low, high := debug.SetMemoryLimit(-1), limitFor(uint64(len(ballast)), headroom), limitFor(uint64(len(ballast))+minHeap*4, headroom); got < low || got > high {
		t.Errorf("memory limit %d MiB with %d MiB of ballast, want %d to %d MiB", got>>20, len(ballast)>>20, low>>20, high>>20)
	}
	p.Stop()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after Stop the GC percent is %d, want GOGC's 100", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("after Stop the memory limit is %d, want none (GOMEMLIMIT unset)", got)
	}
	debug.SetGCPercent(-1)
	if Start(64<<20) != nil {
		t.Error("Start with the collector off: want no pacer")
	}
	debug.SetGCPercent(100)
	if Start(0) != nil {
		t.Error("Start with no headroom: want no pacer")
	}
}

// TestLimitBoundsAStalePercent: the limit stays above the goal GOGC's
// percent gives a steady heap (never more collections than GOGC), and
// bounds the goal a percent set for a small heap would give a heap that
// grew tenfold before the pacer adjusted it.
func TestLimitBoundsAStalePercent(t *testing.T) {
	const headroom = 64 << 20
	for _, live := range []uint64{1 << 20, 16 << 20, 64 << 20, 1 << 30} {
		percent := percentFor(live, headroom, 100)
		goal := max(live, minHeap) * uint64(100+percent) / 100
		limit := uint64(limitFor(live, headroom))
		if limit < goal+headroom/2 {
			t.Errorf("live %d MiB: limit %d MiB, below the goal %d MiB and some slack", live>>20, limit>>20, goal>>20)
		}
		grown := 10 * max(live, minHeap)
		if stale := grown * uint64(100+percent) / 100; live < headroom && limit >= stale {
			t.Errorf("live %d MiB grown to %d MiB: limit %d MiB, not below the stale goal %d MiB", live>>20, grown>>20, limit>>20, stale>>20)
		}
	}
}

// TestHeapGoalStaysNearTheHeadroom: started on a nearly empty heap, the
// pacer must not let the runtime's heap minimum (which scales with the GC
// percent) put the next collection far past the headroom.
func TestHeapGoalStaysNearTheHeadroom(t *testing.T) {
	const headroom = 64 << 20
	p := startFromGOGC100(t, headroom)
	defer p.Stop()
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}, {Name: liveHeap}}
	metrics.Read(s)
	goal, live := s[0].Value.Uint64(), s[1].Value.Uint64()
	if limit := max(live, minHeap) + headroom + minHeap; goal > limit {
		t.Errorf("heap goal %d MiB with %d MiB live and %d MiB of headroom (GC percent %d), want at most %d MiB",
			goal>>20, live>>20, headroom>>20, p.Percent(), limit>>20)
	}
}

// tinyKept holds pointer-free objects of a few bytes, as a server holds
// many: they share the tiny allocator's blocks.
var tinyKept []*int32

// TestPacerTunesAfterEveryCollection: the pacer tunes itself again after
// collections while small pointer-free objects stay live (a cleanup armed
// on such an object never ran: the pacer stopped after its first
// collections).
func TestPacerTunesAfterEveryCollection(t *testing.T) {
	p := startFromGOGC100(t, 16<<20)
	defer p.Stop()
	tunes := func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.tunes
	}
	for i := 0; i < 1000 && tunes() < 5; i++ {
		for range 1000 {
			tinyKept = append(tinyKept, new(int32))
		}
		runtime.GC()
		runtime.Gosched() // the cleanups run on a goroutine of their own
	}
	if n := tunes(); n < 5 {
		t.Errorf("%d tunings after up to 1,000 collections with tiny objects live, want at least 5", n)
	}
	tinyKept = nil
}

// startFromGOGC100 starts a pacer of headroom bytes after a collection at
// GOGC=100, and gives the process its GC percent back when t ends. The
// process has first allocated enough for the whole headroom.
func startFromGOGC100(t *testing.T, headroom uint64) *Pacer {
	t.Helper()
	base := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(base) })
	allocateAtLeast(headroom * allocatedPerHeadroom)
	runtime.GC()
	p := Start(headroom)
	if p == nil {
		t.Fatal("Start returned no pacer with GOGC=100")
	}
	return p
}
