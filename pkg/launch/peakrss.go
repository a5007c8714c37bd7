package launch

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// Why a child's peak RSS is not simply its rusage: Linux charges a child
// with its parent's resident-memory high-water mark at the moment it execs
// (exec records the old address space's peak, and os/exec's child shares
// the parent's until then), so wait4's ru_maxrss is at least the parent's
// peak. A benchmark process that has held 100,000 pods would report that
// much for every process it starts afterwards. The child's own peak is its
// VmHWM in /proc/PID/status, which exec resets; it is readable only while
// the process runs, so a peakRSS samples it.

// peakRSSInterval is how often a running child's VmHWM is read (a read
// costs some 20 µs).
const peakRSSInterval = 100 * time.Millisecond

// peakRSS follows one child's resident-memory high-water mark.
type peakRSS struct {
	pid int
	// inherited is the parent's own high-water mark once the child has
	// started: a ru_maxrss above it is the child's own.
	inherited int64
	sampled   atomic.Int64 // the highest VmHWM read, in bytes
}

// newPeakRSS is called just before the child starts.
func newPeakRSS() *peakRSS {
	hwm, _ := readVmHWM("/proc/self/status")
	return &peakRSS{inherited: hwm}
}

// started records the child's pid once it has started (exec'd: os/exec's
// Start returns after the exec), and reads the parent's high-water mark
// again: the parent may have grown between newPeakRSS and the exec (other
// goroutines allocate meanwhile), and what the child inherited is at most
// that mark.
func (p *peakRSS) started(pid int) {
	p.pid = pid
	if hwm, err := readVmHWM("/proc/self/status"); err == nil {
		p.inherited = max(p.inherited, hwm)
	}
}

// follow samples the child's VmHWM until done is closed; p.pid is set
// before it is started.
func (p *peakRSS) follow(done <-chan struct{}) {
	p.sample()
	t := time.NewTicker(peakRSSInterval)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			p.sample()
		}
	}
}

// sample reads the child's VmHWM now (a process that has ended has none).
func (p *peakRSS) sample() {
	if p.pid == 0 {
		return
	}
	hwm, err := readVmHWM("/proc/" + strconv.Itoa(p.pid) + "/status")
	if err != nil {
		return
	}
	for {
		old := p.sampled.Load()
		if hwm <= old || p.sampled.CompareAndSwap(old, hwm) {
			return
		}
	}
}

// peak returns the child's peak RSS given its rusage's: that one when it is
// above what the child inherited (it is then the child's own, and exact),
// else the highest VmHWM sampled (exact up to the growth of the child's
// last sampling interval).
func (p *peakRSS) peak(maxRSS int64) int64 {
	sampled := p.sampled.Load()
	if maxRSS > p.inherited || sampled == 0 {
		return max(maxRSS, sampled)
	}
	return sampled
}

// readVmHWM returns the VmHWM line of a /proc/PID/status file, in bytes.
func readVmHWM(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return parseVmHWM(b)
}

func parseVmHWM(status []byte) (int64, error) {
	for line := range bytes.Lines(status) {
		rest, ok := bytes.CutPrefix(line, []byte("VmHWM:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("launch: unexpected VmHWM line %q", bytes.TrimSpace(line))
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("launch: VmHWM: %w", err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("launch: no VmHWM line (a kernel thread, or a process that has ended)")
}
