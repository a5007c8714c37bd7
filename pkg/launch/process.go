package launch

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// process is a child process of a run, its output kept in a log file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	log     *os.File
	done    chan struct{} // closed once the process has been waited for
	err     error         // its exit status, once done
	ended   time.Time     // when it was found ended, once done
	rss     *peakRSS
}

// startProcess starts argv with its stdout and stderr in logPath. The child
// gets a process group of its own, so that a terminal's Ctrl-C reaches the
// runner only, which then stops the children in order; it is killed if the
// runner dies.
func startProcess(name, logPath string, env []string, argv ...string) (*process, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("launch: %s: %w", name, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	rss := newPeakRSS()
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("launch: starting %s (%s): %w", name, argv[0], err)
	}
	rss.started(cmd.Process.Pid)
	p := &process{name: name, cmd: cmd, logPath: logPath, log: f, done: make(chan struct{}), rss: rss}
	go rss.follow(p.done)
	go func() {
		p.err = cmd.Wait()
		p.ended = time.Now()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits up to d for the process to end and reports whether it has.
func (p *process) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// stop asks the process to end (SIGTERM) and kills it if it has not within
// grace; it returns once the process is gone.
func (p *process) stop(grace time.Duration) {
	if p.exited() {
		return
	}
	p.rss.sample() // its peak so far: the last chance for a process that was running
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// lastLine returns the last non-empty line of the process's log (a
// failed command's own error message, as Batkube's commands end).
func (p *process) lastLine() string {
	lines := bytes.Split(bytes.TrimSpace([]byte(tail(p.logPath, 12))), []byte("\n"))
	return string(bytes.TrimSpace(lines[len(lines)-1]))
}

// failure describes how the process ended badly, with the end of its log.
func (p *process) failure() error {
	status := "exited"
	if p.err != nil {
		status = p.err.Error()
	}
	return fmt.Errorf("%s %s; the end of its log (%s):\n%s", p.name, status, p.logPath, indent(tail(p.logPath, 12)))
}

// usage returns the CPU time and peak resident memory of an ended process
// (see peakRSS for why the latter is not simply its rusage's).
func (p *process) usage() ProcessUsage {
	u := ProcessUsage{Name: p.name}
	if st := p.cmd.ProcessState; st != nil {
		u.CPU = st.UserTime() + st.SystemTime()
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
			u.MaxRSS = p.rss.peak(ru.Maxrss * 1024) // kilobytes on Linux
		}
	}
	return u
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read: %v)", err)
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	return string(bytes.Join(lines[max(0, len(lines)-n):], []byte("\n")))
}

func indent(s string) string {
	if s == "" {
		return "    (empty)"
	}
	return "    " + string(bytes.ReplaceAll([]byte(s), []byte("\n"), []byte("\n    ")))
}
