//go:build unix

package clock

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// The clock page: a small file that kubernetes-server writes and the
// processes of a run map shared, so that reading simulated time costs a
// memory load rather than a request. Little-endian, 8-byte fields:
//
//	0  magic "BKCLOCK1"
//	8  the epoch: simulated time 0, in Unix nanoseconds
//	16 simulated time since the epoch, in nanoseconds (atomic)
//	24 how many processes attached to the page (atomic)
const (
	pageSize       = 4096
	offsetEpoch    = 8
	offsetElapsed  = 16
	offsetAttached = 24
)

var pageMagic = []byte("BKCLOCK1")

// Page is the clock page, mapped in this process.
type Page struct {
	path string
	mem  []byte
}

// CreatePage creates the clock page at path (replacing any file there) at
// simulated time 0 on epoch, for kubernetes-server, which moves it with
// Set. Processes started with BATKUBE_CLOCK=path read it.
func CreatePage(path string, epoch time.Time) (*Page, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("clock page: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(pageSize); err != nil {
		return nil, fmt.Errorf("clock page %s: %w", path, err)
	}
	p, err := mapPage(path, f)
	if err != nil {
		return nil, err
	}
	copy(p.mem, pageMagic)
	binary.LittleEndian.PutUint64(p.mem[offsetEpoch:], uint64(epoch.UnixNano()))
	return p, nil
}

// OpenPage maps the clock page at path, written by CreatePage.
func OpenPage(path string) (*Page, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("clock page: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("clock page %s: %w", path, err)
	}
	if st.Size() < pageSize {
		return nil, fmt.Errorf("clock page %s: %d bytes, not a clock page", path, st.Size())
	}
	p, err := mapPage(path, f)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(p.mem[:len(pageMagic)], pageMagic) {
		p.Close()
		return nil, fmt.Errorf("clock page %s: not a clock page (magic %q)", path, p.mem[:len(pageMagic)])
	}
	return p, nil
}

func mapPage(path string, f *os.File) (*Page, error) {
	mem, err := syscall.Mmap(int(f.Fd()), 0, pageSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("clock page %s: mmap: %w", path, err)
	}
	return &Page{path: path, mem: mem}, nil
}

// word is the 8-byte field at off, for atomic access (the mapping is
// page-aligned).
func (p *Page) word(off int) *int64 { return (*int64)(unsafe.Pointer(&p.mem[off])) }

// Epoch returns simulated time 0.
func (p *Page) Epoch() time.Time {
	return time.Unix(0, int64(binary.LittleEndian.Uint64(p.mem[offsetEpoch:])))
}

// Elapsed returns simulated time since the epoch.
func (p *Page) Elapsed() time.Duration { return time.Duration(atomic.LoadInt64(p.word(offsetElapsed))) }

// Set moves simulated time to d since the epoch. Only kubernetes-server
// sets it, before it applies an instant's events.
func (p *Page) Set(d time.Duration) { atomic.StoreInt64(p.word(offsetElapsed), int64(d)) }

// Attached returns how many processes attached to the page: processes
// whose clock is simulated.
func (p *Page) Attached() int { return int(atomic.LoadInt64(p.word(offsetAttached))) }

// attach counts this process among the page's.
func (p *Page) attach() { atomic.AddInt64(p.word(offsetAttached), 1) }

// Path returns the page's file.
func (p *Page) Path() string { return p.path }

// Close unmaps the page (its file stays; the creator removes it).
func (p *Page) Close() error {
	if p.mem == nil {
		return errors.New("clock page: closed twice")
	}
	err := syscall.Munmap(p.mem)
	p.mem = nil
	return err
}
