package launch

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Ports hands out free loopback ports to the runs of one process, so that
// runs started side by side (a campaign's -j N) can never be given the
// same port: a port stays taken until Release, even in the gap between
// the runner choosing it and the child process binding it. Every port a
// run opens — the API server's, the Batsim socket's, kube-scheduler's
// secure (and, before 1.23, insecure) port, the sidecars' {port:NAME} —
// comes from the run's Ports.
//
// Ports are drawn at random below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range), where the kernel never puts the local
// end of an outgoing connection: the scheduler's and the clients' many
// connections cannot take a port between its choice and its bind. Each
// is checked free by binding it. A Ports is safe for concurrent use.
type Ports struct {
	mu     sync.Mutex
	taken  map[int]bool
	lo, hi int // ports are drawn from [lo, hi)
}

// NewPorts returns a Ports that draws from below the ephemeral range (or
// above it when there is no room below).
func NewPorts() *Ports {
	lo, hi := portRange(ephemeralRange())
	return newPorts(lo, hi)
}

func newPorts(lo, hi int) *Ports {
	return &Ports{taken: map[int]bool{}, lo: lo, hi: hi}
}

// portRange chooses where ports are drawn from, given the kernel's
// ephemeral range [elo, ehi]: [10000, elo) when that holds at least a
// thousand ports, else (ehi, 65535], else [20000, 32768) as a last resort
// (every port is ephemeral: binding still checks each).
func portRange(elo, ehi int) (lo, hi int) {
	const minSize = 1000
	switch {
	case elo-10000 >= minSize:
		return 10000, elo
	case 65535-ehi >= minSize:
		return ehi + 1, 65536
	default:
		return 20000, 32768
	}
}

// ephemeralRange reads the kernel's range of ports for outgoing
// connections (Linux's default when it cannot).
func ephemeralRange() (lo, hi int) {
	lo, hi = 32768, 60999
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return lo, hi
	}
	f := strings.Fields(string(data))
	if len(f) != 2 {
		return lo, hi
	}
	a, err1 := strconv.Atoi(f[0])
	b, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || a < 1 || b < a || b > 65535 {
		return lo, hi
	}
	return a, b
}

// Take returns a port that is free on 127.0.0.1 and that this Ports has
// not handed out since it was last released.
func (p *Ports) Take() (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.hi - p.lo
	for range min(4*n, 2000) {
		port := p.lo + rand.IntN(n)
		if p.taken[port] {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue // someone else's
		}
		l.Close()
		p.taken[port] = true
		return port, nil
	}
	return 0, fmt.Errorf("launch: no free port found in [%d, %d) (%d handed out and not released)", p.lo, p.hi, len(p.taken))
}

// Release makes ports available again, once the processes that bound
// them are gone.
func (p *Ports) Release(ports ...int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, port := range ports {
		delete(p.taken, port)
	}
}

// port takes a free loopback port for the run from its pool.
func (r *run) port() (int, error) {
	p, err := r.pool.Take()
	if err != nil {
		return 0, err
	}
	r.held = append(r.held, p)
	return p, nil
}

// portOr returns port, or a free one if it is 0.
func (r *run) portOr(port int) (int, error) {
	if port != 0 {
		return port, nil
	}
	return r.port()
}
