// Package gcpace paces the Go garbage collector of a process whose live
// heap is small, as Batkube's server's is in most simulations: by default
// (GOGC=100) Go collects each time the heap doubles, so a server holding
// 15 MB collects every 15 MB allocated, a tenth of its CPU on a sparse
// trace. Pacer keeps the next collection at least a headroom above the
// live heap instead; on a big heap it changes nothing, so memory per object
// stays what GOGC gives.
//
// The percent is a multiple of the live heap, set after each collection:
// when the live heap jumps between two collections (kubernetes-server
// compiling a batch of CRDs, while every process of a run starts), the
// percent set for the smaller heap would put the next collection a
// multiple of the new heap away before the pacer adjusts it (measured: 640
// MiB of RSS for 40 MiB live). The pacer therefore also sets a soft memory
// limit (runtime/debug.SetMemoryLimit) of three times the live heap and
// the headroom: above the GOGC goal and the runtime's other memory, a
// bound on the jump (Kueue's start: 275 MiB). The limit also counts memory
// the heap freed but the runtime kept: on BenchmarkSimulationMemory's
// 100,000 jobs it held the server's peak RSS at 206 MiB instead of 265 MiB,
// for 54 collections instead of 28 (server CPU within the run-to-run noise).
//
// The headroom grows with what the process has allocated: an eighth of
// it, from the runtime's heap minimum up to the headroom asked for. Each
// byte of headroom is memory the heap touches for the first time, a page
// fault and a page cleared: on this project's virtual machine 16 µs a
// 4 KiB page, so 64 MiB of headroom cost a short run (the sparse 10-hour
// trace, some 80 MB allocated in all) more than the collections it saved:
// server CPU 2.1–2.7 s against 1.8–1.95 s with no pacing, 16–56 % more
// in six interleaved pairs. A run that allocates gigabytes (Kueue's, a
// million jobs) reaches the full headroom within seconds.
//
// It adjusts the process-wide GC percent and memory limit, so one Pacer
// per process, started by main.
package gcpace

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// liveHeap is the runtime metric of the heap the last collection kept;
// allocated the one of every byte the heap has allocated so far.
const (
	liveHeap  = "/gc/heap/live:bytes"
	allocated = "/gc/heap/allocs:bytes"
)

// allocatedPerHeadroom is how many bytes the process must have allocated
// for each byte of headroom the pacer gives it.
const allocatedPerHeadroom = 8

// maxPercent bounds the GC percent the pacer sets (the next collection at
// most 100× the live heap).
const maxPercent = 10000

// Pacer keeps the next collection at least a headroom above the live heap,
// and never closer than the GC percent the process started with; the
// headroom grows with the bytes allocated up to the one given to Start.
type Pacer struct {
	headroom  uint64
	base      int   // the GC percent at Start (GOGC)
	baseLimit int64 // the memory limit at Start (GOMEMLIMIT)

	mu      sync.Mutex
	stopped bool
	percent int
	sample  []metrics.Sample
	// tunes counts the tunings after a collection.
	tunes int
}

// Start starts pacing with the given headroom. It does nothing (and
// returns nil) when the headroom is 0 or the collector is off (GOGC=off).
func Start(headroom uint64) *Pacer {
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	if headroom == 0 || base < 0 {
		return nil
	}
	p := &Pacer{headroom: headroom, base: base, baseLimit: debug.SetMemoryLimit(-1), percent: base,
		sample: []metrics.Sample{{Name: liveHeap}, {Name: allocated}}}
	p.tune()
	p.arm()
	return p
}

// Stop ends the pacing and restores the GC percent of the start.
func (p *Pacer) Stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	debug.SetGCPercent(p.base)
	debug.SetMemoryLimit(p.baseLimit)
}

// Percent returns the GC percent the pacer set last.
func (p *Pacer) Percent() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.percent
}

// arm runs tune after the next collection: a cleanup of an object that
// nothing references runs once a collection has found it unreachable. The
// object holds a pointer so that it gets a block of its own: a
// pointer-free object under 16 bytes shares a block of the tiny allocator
// with others, and its cleanup never runs while any of them lives (the
// server's tiny objects always do: the pacer then stopped after its first
// collections, its soft memory limit set for a heap of tens of MiB, and a
// Kueue run's server spent 40 % of its CPU collecting).
func (p *Pacer) arm() {
	sentinel := new(*int64)
	runtime.AddCleanup(sentinel, func(p *Pacer) {
		p.mu.Lock()
		stopped := p.stopped
		p.tunes++
		p.mu.Unlock()
		if !stopped {
			p.tune()
			p.arm()
		}
	}, p)
}

// tune sets the GC percent from the live heap the last collection kept.
func (p *Pacer) tune() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	metrics.Read(p.sample)
	var live, allocs uint64
	if p.sample[0].Value.Kind() == metrics.KindUint64 {
		live = p.sample[0].Value.Uint64()
	}
	if p.sample[1].Value.Kind() == metrics.KindUint64 {
		allocs = p.sample[1].Value.Uint64()
	}
	headroom := headroomFor(allocs, p.headroom)
	percent := percentFor(live, headroom, p.base)
	if percent != p.percent {
		debug.SetGCPercent(percent)
		p.percent = percent
	}
	debug.SetMemoryLimit(min(limitFor(live, headroom), p.baseLimit))
}

// headroomFor is the headroom after allocs bytes allocated: an eighth of
// them, at least the runtime's heap minimum and at most most.
func headroomFor(allocs, most uint64) uint64 {
	return min(max(allocs/allocatedPerHeadroom, minHeap), most)
}

// limitFor is the soft memory limit for a live heap of live bytes: three
// times the live heap and the headroom (the goal is at most twice the live
// heap, at GOGC=100, or the live heap plus the headroom), the rest for the
// runtime's other memory and the heap's fragmentation.
func limitFor(live, headroom uint64) int64 {
	return int64(min(3*(max(live, minHeap)+headroom), math.MaxInt64/3))
}

// minHeap is the Go runtime's heap minimum at GOGC=100: whatever the live
// heap, no collection is due before the heap reaches minHeap × GOGC/100.
const minHeap = 4 << 20

// percentFor is the GC percent that puts the next collection headroom
// above a live heap of live bytes, at least base and at most maxPercent.
// A live heap under minHeap counts as minHeap: the runtime's heap minimum
// scales with the percent, so a percent computed from a nearly empty heap
// (10,000 % for 640 KiB) would hold off the first collection until the
// heap reached 400 MB, and the server's RSS with it.
func percentFor(live, headroom uint64, base int) int {
	want := math.Ceil(float64(headroom) * 100 / float64(max(live, minHeap)))
	return int(min(max(want, float64(base)), maxPercent))
}
