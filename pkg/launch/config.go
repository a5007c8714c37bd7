package launch

import (
	"fmt"
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
