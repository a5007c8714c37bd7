package launch

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"

	"sigs.k8s.io/yaml"
)

// kubeSchedulerVersion runs `bin --version` and returns the minor version
// of a kube-scheduler ("Kubernetes v1.37.1" → 37).
func kubeSchedulerVersion(bin string) (minor int, version string, err error) {
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		return 0, "", fmt.Errorf("launch: %s --version: %w: %s", bin, err, bytes.TrimSpace(out))
	}
	m := regexp.MustCompile(`v1\.(\d+)\.\d+`).FindSubmatch(out)
	if m == nil {
		return 0, "", fmt.Errorf("launch: %s --version said %q: not a kube-scheduler version", bin, bytes.TrimSpace(out))
	}
	minor, _ = strconv.Atoi(string(m[1]))
	return minor, string(m[0]), nil
}

// insecurePortName names the port of an old kube-scheduler's insecure
// endpoints among the run's {port:NAME} ports.
const insecurePortName = "kube-scheduler-insecure"

// configAPIVersion is the KubeSchedulerConfiguration version a
// kube-scheduler of that minor version reads best.
func configAPIVersion(minor int) string {
	switch {
	case minor >= 25:
		return "kubescheduler.config.k8s.io/v1"
	case minor >= 23:
		return "kubescheduler.config.k8s.io/v1beta3"
	case minor >= 19:
		return "kubescheduler.config.k8s.io/v1beta1"
	default:
		return "kubescheduler.config.k8s.io/v1alpha2"
	}
}

// defaultSchedulerConfig is kube-scheduler's configuration when the user
// gives none: upstream defaults (leader election, protobuf, every default
// plugin), with the client rate limits raised since the server is in memory.
func defaultSchedulerConfig(minor int) string {
	return "apiVersion: " + configAPIVersion(minor) + `
kind: KubeSchedulerConfiguration
clientConnection:
  qps: 5000
  burst: 5000
leaderElection:
  leaderElect: true
`
}

// writeSchedulerConfig writes to path the KubeSchedulerConfiguration read
// from src (the default one for that minor version if src is empty),
// passed through expand (the run's placeholders), with its
// clientConnection.kubeconfig set to kubeconfigPath, and returns the
// schedulerNames of its profiles.
func writeSchedulerConfig(path, src, kubeconfigPath string, minor int, expand func(string) (string, error)) ([]string, error) {
	data := []byte(defaultSchedulerConfig(minor))
	if src != "" {
		read, err := os.ReadFile(src)
		if err != nil {
			return nil, fmt.Errorf("launch: scheduler configuration: %w", err)
		}
		expanded, err := expand(string(read))
		if err != nil {
			return nil, fmt.Errorf("launch: scheduler configuration %s: %w", src, err)
		}
		data = []byte(expanded)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("launch: scheduler configuration %s: %w", src, err)
	}
	if cfg == nil {
		cfg = map[string]any{}
	}
	conn, _ := cfg["clientConnection"].(map[string]any)
	if conn == nil {
		conn = map[string]any{}
	}
	conn["kubeconfig"] = kubeconfigPath
	cfg["clientConnection"] = conn
	if minor <= 22 {
		// Older schedulers also serve healthz and metrics insecurely, on
		// 0.0.0.0:10251 unless told otherwise (their configuration cannot
		// turn it off): runs side by side would fight for that port.
		_, healthz := cfg["healthzBindAddress"]
		_, metrics := cfg["metricsBindAddress"]
		if !healthz && !metrics {
			// A port of the run's, as {port:NAME} is.
			addr, err := expand("127.0.0.1:{port:" + insecurePortName + "}")
			if err != nil {
				return nil, fmt.Errorf("launch: scheduler configuration: %w", err)
			}
			cfg["healthzBindAddress"], cfg["metricsBindAddress"] = addr, addr
		}
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("launch: scheduler configuration: %w", err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	return profileNames(cfg), nil
}

// gangsMinMinor is the oldest kube-scheduler that schedules pod groups
// (scheduling.k8s.io/v1beta1, GenericWorkload).
const gangsMinMinor = 37

// profileNames returns the schedulerNames of a configuration's profiles
// (default-scheduler when it has none).
func profileNames(cfg map[string]any) []string {
	var names []string
	profiles, _ := cfg["profiles"].([]any)
	for _, p := range profiles {
		m, _ := p.(map[string]any)
		name, _ := m["schedulerName"].(string)
		if name == "" {
			name = "default-scheduler"
		}
		names = append(names, name)
	}
	if len(names) == 0 {
		names = []string{"default-scheduler"}
	}
	return names
}

// kubeScheduler is how a run starts a kube-scheduler.
type kubeScheduler struct {
	bin, config string
	minor       int
	version     string
	names       []string // its profiles' schedulerNames
	metricsPort int
}

func (r *run) startScheduler() error {
	if r.cfg.NoScheduler {
		return nil
	}
	logPath := filepath.Join(r.cfg.OutDir, "scheduler.log")
	env := []string{"KUBECONFIG=" + r.kubeconfig}
	var err error
	if r.cfg.SchedulerCommand != "" {
		command, _, err := r.expand(r.cfg.SchedulerCommand)
		if err != nil {
			return fmt.Errorf("launch: the scheduler's command: %w", err)
		}
		r.scheduler, err = startProcess(SchedulerProcess, logPath, env, "/bin/sh", "-c", "exec "+command)
		return err
	}
	k := r.kube
	args := []string{k.bin, "--config", k.config,
		// Its metrics, for the server's settle policy: served on loopback,
		// the scrapes authenticated and authorised by asking the server.
		"--secure-port", strconv.Itoa(k.metricsPort), "--bind-address", "127.0.0.1",
		"--authentication-kubeconfig", r.kubeconfig, "--authorization-kubeconfig", r.kubeconfig}
	if r.gangs {
		args = append(args, "--feature-gates=GenericWorkload=true")
	}
	args = append(args, r.cfg.KubeSchedulerArgs...)
	if r.scheduler, err = startProcess(SchedulerProcess, logPath, env, args...); err != nil {
		return err
	}
	return writePIDFile(r.schedulerPIDFile(), r.scheduler)
}

// schedulerPIDFile is where the bundled kube-scheduler's PID is written
// for the server (kubernetes-server --kube-scheduler-pid-file).
func (r *run) schedulerPIDFile() string { return filepath.Join(r.cfg.OutDir, "kube-scheduler.pid") }

// planKubeScheduler prepares the kube-scheduler the run starts, if any:
// its configuration, version and metrics port.
func (r *run) planKubeScheduler() error {
	if r.cfg.NoScheduler || r.cfg.SchedulerCommand != "" {
		return nil
	}
	bin := r.cfg.KubeScheduler
	if bin == "" {
		var err error
		if bin, err = r.bin("kube-scheduler"); err != nil {
			return err
		}
	}
	minor, version, err := kubeSchedulerVersion(bin)
	if err != nil {
		return err
	}
	if r.cfg.Gangs && minor < gangsMinMinor {
		return fmt.Errorf("launch: gangs (pod groups) need kube-scheduler 1.%d or later; %s is %s", gangsMinMinor, bin, version)
	}
	r.gangs = !r.cfg.NoGangs && (r.cfg.Gangs || minor >= gangsMinMinor)
	config := filepath.Join(r.cfg.OutDir, "kube-scheduler.yaml")
	names, err := writeSchedulerConfig(config, r.cfg.SchedulerConfig, r.kubeconfig, minor, func(s string) (string, error) {
		out, _, err := r.expand(s)
		return out, err
	})
	if err != nil {
		return err
	}
	port, err := r.port()
	if err != nil {
		return err
	}
	r.kube = &kubeScheduler{bin: bin, config: config, minor: minor, version: version, names: names, metricsPort: port}
	return nil
}
