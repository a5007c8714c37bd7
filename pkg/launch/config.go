package launch

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// Kubeconfig returns a kubeconfig for the API server at url (no
// authentication).
func Kubeconfig(url string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: batkube
  cluster:
    server: %s
contexts:
- name: batkube
  context:
    cluster: batkube
    user: batkube
current-context: batkube
users:
- name: batkube
  user: {}
`, url)
}

// defaultSchedulerConfig is kube-scheduler's configuration when the user
// gives none: upstream defaults (leader election, protobuf, every default
// plugin), with the client rate limits raised since the server is in memory.
const defaultSchedulerConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  qps: 5000
  burst: 5000
leaderElection:
  leaderElect: true
`

// writeSchedulerConfig writes to path the KubeSchedulerConfiguration read
// from src (the default one if src is empty) with its
// clientConnection.kubeconfig set to kubeconfigPath.
func writeSchedulerConfig(path, src, kubeconfigPath string) error {
	data := []byte(defaultSchedulerConfig)
	if src != "" {
		var err error
		if data, err = os.ReadFile(src); err != nil {
			return fmt.Errorf("launch: scheduler configuration: %w", err)
		}
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return fmt.Errorf("launch: scheduler configuration %s: %w", src, err)
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
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("launch: scheduler configuration: %w", err)
	}
	return os.WriteFile(path, out, 0o644)
}
