package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/launch"
)

// BenchmarkServerStartup measures what a start of kubernetes-server costs
// before it serves: the CPU time (user+sys, from the process's rusage) of
// bin/kubernetes-server from exec to its first 200 on /readyz, and the
// wall time to that answer. A campaign of a thousand short runs pays it a
// thousand times. Beside it, in the same run, the start-up of the
// unmodified kube-scheduler 1.37 against that server (exec to its own
// /readyz: informers synced), the cost it is to be compared with.
//
// With BATKUBE_STARTUP_BASELINE=/path/to/an/older/kubernetes-server, each
// iteration also starts that binary, alternating with this checkout's, so
// that a before/after comparison is measured side by side on the same load.
func BenchmarkServerStartup(b *testing.B) {
	bin := filepath.Join(batkubeBinariesWithoutRace(b), "kubernetes-server")
	scheduler := binary(b, "kube-scheduler")
	baseline := os.Getenv("BATKUBE_STARTUP_BASELINE")
	var server, sched, base []startupCost
	for b.Loop() {
		if baseline != "" {
			base = append(base, measureServerStartup(b, baseline))
		}
		server = append(server, measureServerStartup(b, bin))
		sched = append(sched, measureSchedulerStartup(b, scheduler, bin))
	}
	report := func(name string, costs []startupCost) startupCost {
		m := medianCost(costs)
		b.ReportMetric(m.cpu.Seconds(), name+"-cpu-s")
		b.ReportMetric(m.wall.Seconds(), name+"-wall-s")
		return m
	}
	s := report("server", server)
	b.ReportMetric(float64(s.maxRSS>>20), "server-rss-MiB")
	k := report("sched", sched)
	b.Logf("start-up to a serving API (median of %d): kubernetes-server %.3f s CPU (user %.3f, sys %.3f), %.3f s wall, peak RSS %d MiB; "+
		"kube-scheduler 1.37 against it, to its /readyz: %.3f s CPU, %.3f s wall",
		len(server), s.cpu.Seconds(), s.user.Seconds(), s.sys.Seconds(), s.wall.Seconds(), s.maxRSS>>20, k.cpu.Seconds(), k.wall.Seconds())
	if baseline != "" {
		o := report("baseline", base)
		b.ReportMetric(o.cpu.Seconds()/s.cpu.Seconds(), "baseline/server-cpu")
		b.Logf("baseline %s: %.3f s CPU, %.3f s wall, peak RSS %d MiB (%.1fx this checkout's CPU)",
			baseline, o.cpu.Seconds(), o.wall.Seconds(), o.maxRSS>>20, o.cpu.Seconds()/s.cpu.Seconds())
	}
}

// startupCost is what a process cost from its exec to its first ready answer.
type startupCost struct {
	cpu, user, sys time.Duration
	wall           time.Duration
	maxRSS         int64 // bytes
}

// medianCost returns the median of each figure.
func medianCost(costs []startupCost) startupCost {
	median := func(f func(startupCost) time.Duration) time.Duration {
		v := make([]time.Duration, len(costs))
		for i, c := range costs {
			v[i] = f(c)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	m := startupCost{
		cpu:  median(func(c startupCost) time.Duration { return c.cpu }),
		user: median(func(c startupCost) time.Duration { return c.user }),
		sys:  median(func(c startupCost) time.Duration { return c.sys }),
		wall: median(func(c startupCost) time.Duration { return c.wall }),
	}
	m.maxRSS = int64(median(func(c startupCost) time.Duration { return time.Duration(c.maxRSS) }))
	return m
}

// measureServerStartup starts a kubernetes-server binary and measures it
// until its first 200 on /readyz.
func measureServerStartup(tb testing.TB, bin string) startupCost {
	tb.Helper()
	port := freePort(tb)
	var log bytes.Buffer
	cmd := exec.Command(bin, "--host", "127.0.0.1", "--port", strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = &log, &log
	cost, err := untilReady(cmd, &http.Client{Timeout: time.Second}, fmt.Sprintf("http://127.0.0.1:%d/readyz", port))
	if err != nil {
		tb.Fatalf("%s: %v\n%s", bin, err, log.Bytes())
	}
	return cost
}

// measureSchedulerStartup starts kube-scheduler against a kubernetes-server
// started for it and measures the scheduler until its /readyz answers 200.
func measureSchedulerStartup(tb testing.TB, scheduler, server string) startupCost {
	tb.Helper()
	port := freePort(tb)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	srv := exec.Command(server, "--host", "127.0.0.1", "--port", strconv.Itoa(port))
	if err := srv.Start(); err != nil {
		tb.Fatal(err)
	}
	defer func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
	}()
	dir := tb.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(launch.Kubeconfig(url)), 0o600); err != nil {
		tb.Fatal(err)
	}
	port = freePort(tb)
	var log bytes.Buffer
	cmd := exec.Command(scheduler, "--kubeconfig", kubeconfig, "--leader-elect=false",
		"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(port), "--cert-dir", dir)
	cmd.Stdout, cmd.Stderr = &log, &log
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // its self-signed serving certificate
	}}
	cost, err := untilReady(cmd, client, fmt.Sprintf("https://127.0.0.1:%d/readyz", port))
	if err != nil {
		tb.Fatalf("%s: %v\n%s", scheduler, err, log.Bytes())
	}
	return cost
}

// untilReady starts cmd, polls readyURL until it answers 200, and returns
// what the process cost until then: it is stopped (SIGSTOP) the moment the
// answer arrives, then killed, and its rusage read. (The exit itself adds
// the unmapping of its memory to the system time.)
func untilReady(cmd *exec.Cmd, client *http.Client, readyURL string) (startupCost, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return startupCost{}, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	poll := time.NewTicker(2 * time.Millisecond)
	defer poll.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, readyURL, nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				wall := time.Since(start)
				_ = cmd.Process.Signal(syscall.SIGSTOP)
				_ = cmd.Process.Kill()
				<-exited
				st := cmd.ProcessState
				c := startupCost{user: st.UserTime(), sys: st.SystemTime(), wall: wall}
				c.cpu = c.user + c.sys
				if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
					c.maxRSS = ru.Maxrss << 10 // kilobytes on Linux
				}
				return c, nil
			}
		}
		select {
		case err := <-exited:
			return startupCost{}, fmt.Errorf("exited before it was ready: %v", err)
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			<-exited
			return startupCost{}, fmt.Errorf("not ready within a minute")
		case <-poll.C:
		}
	}
}
