package launch

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestParseVmHWM(t *testing.T) {
	got, err := parseVmHWM([]byte("Name:\tsleep\nVmPeak:\t   8000 kB\nVmHWM:\t    1536 kB\nVmRSS:\t    1024 kB\n"))
	if err != nil || got != 1536<<10 {
		t.Fatalf("parseVmHWM = %d, %v; want %d", got, err, 1536<<10)
	}
	for _, bad := range []string{"Name:\tx\n", "VmHWM:\t12 MB\n", "VmHWM:\tlots kB\n", ""} {
		if _, err := parseVmHWM([]byte(bad)); err == nil {
			t.Errorf("parseVmHWM(%q): no error", bad)
		}
	}
}

// A process started by a parent that has used much memory is charged, by
// its rusage, with the parent's peak: the usage reported is its own.
func TestPeakRSSIsTheChildsOwn(t *testing.T) {
	const grown = 256 << 20
	ballast := make([]byte, grown)
	for i := range ballast {
		ballast[i] = 1 // resident
	}
	p, err := startProcess("sleep", filepath.Join(t.TempDir(), "sleep.log"), nil, "sleep", "1000")
	if err != nil {
		t.Fatal(err)
	}
	p.stop(10 * time.Second)
	ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no rusage")
	}
	if ru.Maxrss*1024 < grown {
		t.Logf("this kernel does not charge the parent's peak to the child (ru_maxrss %d KiB)", ru.Maxrss)
	}
	if u := p.usage(); u.MaxRSS <= 0 || u.MaxRSS > 64<<20 {
		t.Errorf("sleep's peak RSS = %d MiB, want its own (a few MiB); rusage said %d MiB", u.MaxRSS>>20, ru.Maxrss>>10)
	}
	_ = ballast[len(ballast)-1]
}
