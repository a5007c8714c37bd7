package launch

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Sidecars: processes a run starts beside the scheduler, such as a
// scheduler extender kube-scheduler calls. A sidecar command, like the
// scheduler's configuration file, may say {port:NAME}: the runner puts
// there a free loopback port, the same for every mention of NAME, so that
// the extender listens where the configuration sends kube-scheduler. The
// scheduler starts once every port a sidecar's command names accepts
// connections; a sidecar that exits before the end fails the run.

// portPlaceholder is {port:NAME}.
var portPlaceholder = regexp.MustCompile(`\{port:([A-Za-z0-9_.-]+)\}`)

// SidecarReadyTimeout bounds the wait for a sidecar's ports.
const SidecarReadyTimeout = 30 * time.Second

// expand replaces the {port:NAME} placeholders of s by the run's ports
// (chosen on first mention) and {kubeconfig} by the run's kubeconfig; it
// returns the ports s names.
func (r *run) expand(s string) (string, []int, error) {
	var ports []int
	var err error
	out := portPlaceholder.ReplaceAllStringFunc(s, func(m string) string {
		name := portPlaceholder.FindStringSubmatch(m)[1]
		port, ok := r.ports[name]
		if !ok {
			var perr error
			if port, perr = r.port(); perr != nil {
				err = perr
				return m
			}
			r.ports[name] = port
		}
		ports = append(ports, port)
		return strconv.Itoa(port)
	})
	return strings.ReplaceAll(out, "{kubeconfig}", r.kubeconfig), ports, err
}

// expandEach returns args with their placeholders replaced.
func (r *run) expandEach(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		expanded, _, err := r.expand(a)
		if err != nil {
			return nil, err
		}
		out = append(out, expanded)
	}
	return out, nil
}

// startSidecars starts the sidecars and waits until each serves the ports
// its command names.
func (r *run) startSidecars(ctx context.Context) error {
	for i, command := range r.cfg.Sidecars {
		name := fmt.Sprintf("sidecar-%d", i+1)
		expanded, ports, err := r.expand(command)
		if err != nil {
			return fmt.Errorf("launch: %s: %w", name, err)
		}
		p, err := startProcess(name, filepath.Join(r.cfg.OutDir, name+".log"), []string{"KUBECONFIG=" + r.kubeconfig},
			"/bin/sh", "-c", "exec "+expanded)
		if err != nil {
			return err
		}
		r.sidecars = append(r.sidecars, p)
		for _, port := range ports {
			if err := waitListening(ctx, p, port); err != nil {
				return fmt.Errorf("launch: %s (%s): %w", name, expanded, err)
			}
		}
	}
	return nil
}

// waitListening waits until 127.0.0.1:port accepts connections, the
// process exits, or SidecarReadyTimeout passes.
func waitListening(ctx context.Context, p *process, port int) error {
	deadline := time.Now().Add(SidecarReadyTimeout)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return conn.Close()
		}
		if p.exited() {
			return p.failure()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s after %s", addr, SidecarReadyTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.done:
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// sidecarDone returns a channel that receives each sidecar that exits.
func (r *run) sidecarDone() <-chan *process {
	ch := make(chan *process, len(r.sidecars))
	for _, p := range r.sidecars {
		go func() {
			<-p.done
			ch <- p
		}()
	}
	return ch
}
