package launch

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/batkube/batkube/pkg/atomicfile"

	kubeclock "github.com/batkube/batkube/pkg/simtime/kubeclock"
)

// ControllerManagerProcess names kube-controller-manager in
// Summary.Processes and its log, OutDir/kube-controller-manager.log.
const ControllerManagerProcess = "kube-controller-manager"

// DefaultControllers are the controllers of kube-controller-manager a
// batch cluster needs, which a run with Config.ControllerManager starts:
// Jobs, ReplicaSets and Deployments, the garbage collector (owned pods go
// with their owner), the TTL of finished Jobs, the ResourceClaims of pods'
// claim templates (DRA), the eviction of pods from nodes tainted NoExecute
// (Batkube taints a lost machine's node unreachable), and DaemonSets
// (whose controller also indexes pods by node, which the taint eviction
// controller reads). Not the node lifecycle controller: Batkube's nodes
// have no kubelet posting heartbeats, it would take them all for lost;
// Batkube plays its part for Batsim's machine failures (a lost node's jobs
// are killed at that instant, as Batsim kills them).
var DefaultControllers = []string{
	"job-controller", "replicaset-controller", "deployment-controller",
	"garbage-collector-controller", "ttl-after-finished-controller",
	"resourceclaim-controller", "taint-eviction-controller", "daemonset-controller",
}

// controllerManagerPIDFile is where kube-controller-manager's PID is
// written for the server (kubernetes-server --controller-manager-pid-file).
func (r *run) controllerManagerPIDFile() string {
	return filepath.Join(r.cfg.OutDir, ControllerManagerProcess+".pid")
}

// clockFile is the run's clock page (kubernetes-server --clock-file).
func (r *run) clockFile() string { return filepath.Join(r.cfg.OutDir, "clock") }

// startControllerManager starts BinDir/kube-controller-manager on the
// run's kubeconfig: no leader election (it is alone), its controllers on
// the run's own credentials (Batkube authorises every request; no
// service-account tokens to mint), its metrics on a loopback port
// authenticated by asking the server, as kube-scheduler's; unless
// ControllerManagerWallClock, on the run's simulated clock
// (kubeclock.EnvPage and EnvServer).
func (r *run) startControllerManager() error {
	if !r.cfg.ControllerManager {
		return nil
	}
	bin, err := r.bin(ControllerManagerProcess)
	if err != nil {
		return err
	}
	port, err := r.port()
	if err != nil {
		return err
	}
	args := []string{bin, "--kubeconfig", r.kubeconfig,
		"--controllers=" + strings.Join(DefaultControllers, ","),
		"--leader-elect=false", "--use-service-account-credentials=false",
		"--secure-port", strconv.Itoa(port), "--bind-address", "127.0.0.1",
		"--authentication-kubeconfig", r.kubeconfig, "--authorization-kubeconfig", r.kubeconfig,
		// The server is in memory: no client-side rate limit.
		"--kube-api-qps=5000", "--kube-api-burst=5000"}
	args = append(args, r.cfg.ControllerManagerArgs...)
	_, err = r.startController(ControllerManagerProcess, r.controllerManagerPIDFile(), args)
	return err
}

// startController starts argv as the controller name, one of the run's
// sidecars: on the run's kubeconfig and, unless ControllerManagerWallClock,
// on its simulated clock (kubeclock.EnvPage and EnvServer), its output in
// OutDir/NAME.log and its PID written to pidFile for the server.
func (r *run) startController(name, pidFile string, argv []string) (*process, error) {
	return r.startControllerWith(name, pidFile, nil, argv)
}

// startControllerWith is startController with more environment variables.
func (r *run) startControllerWith(name, pidFile string, extraEnv, argv []string) (*process, error) {
	env := append([]string{"KUBECONFIG=" + r.kubeconfig}, extraEnv...)
	if !r.cfg.ControllerManagerWallClock {
		env = append(env, kubeclock.EnvPage+"="+r.clockFile(), kubeclock.EnvServer+"="+r.apiURL)
	}
	p, err := startProcess(name, filepath.Join(r.cfg.OutDir, name+".log"), env, argv...)
	if err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	r.sidecars = append(r.sidecars, p)
	return p, writePIDFile(pidFile, p)
}

// writePIDFile writes the process's PID to path, for the server, which
// watches the process for quiescence.
func writePIDFile(path string, p *process) error {
	return atomicfile.Write(path, []byte(strconv.Itoa(p.cmd.Process.Pid)+"\n"))
}
