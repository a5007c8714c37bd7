package launch

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// Kueue's manifests are sorted as a simulated cluster needs them: its
// namespace, CRDs, Secret and webhook Service (with an endpoint on this
// machine at the webhook port) before the run's objects, its webhook
// configurations after; its Deployment, RBAC and other Services left out.
func TestKueueInstall(t *testing.T) {
	manifests := `apiVersion: v1
kind: Namespace
metadata: {name: kueue-system}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: clusterqueues.kueue.x-k8s.io}
---
apiVersion: v1
kind: Service
metadata: {name: kueue-webhook-service, namespace: kueue-system}
spec:
  ports: [{port: 443, protocol: TCP, targetPort: 9443}]
---
apiVersion: v1
kind: Service
metadata: {name: kueue-controller-manager-metrics-service, namespace: kueue-system}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: kueue-controller-manager, namespace: kueue-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: kueue-manager-role}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: kueue-mutating-webhook-configuration}
---
apiVersion: v1
kind: Secret
metadata: {name: kueue-webhook-server-cert, namespace: kueue-system}
`
	install, webhooks, err := kueueInstall([]byte(manifests), 19443)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range install {
		kinds = append(kinds, o["kind"].(string))
	}
	if got := strings.Join(kinds, ","); got != "Namespace,CustomResourceDefinition,Service,Secret,EndpointSlice" {
		t.Errorf("installed %s", got)
	}
	if len(webhooks) != 1 || webhooks[0]["kind"] != "MutatingWebhookConfiguration" {
		t.Errorf("webhooks %v", webhooks)
	}
	slice, _ := yaml.Marshal(install[len(install)-1])
	for _, want := range []string{"kubernetes.io/service-name: kueue-webhook-service", "127.0.0.1", "port: 19443"} {
		if !strings.Contains(string(slice), want) {
			t.Errorf("the webhook's EndpointSlice lacks %q:\n%s", want, slice)
		}
	}
	if _, _, err := kueueInstall([]byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n"), 1); err == nil {
		t.Error("manifests without the webhook Service: no error")
	}
}

// A configuration overlay merges mappings key by key and replaces the rest.
func TestMergeKueueConfig(t *testing.T) {
	base := kueueConfig("/out", 9443, 8081)
	merged, err := mergeYAML([]byte(base), []byte("fairSharing:\n  preemptionStrategies: [LessThanInitialShare]\nwebhook:\n  port: 7443\nintegrations:\n  frameworks: [batch/job, pod]\n"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Namespace string
		Webhook   struct {
			Host    string
			Port    int
			CertDir string `json:"certDir"`
		}
		Integrations struct{ Frameworks []string }
		FairSharing  struct {
			PreemptionStrategies []string `json:"preemptionStrategies"`
		} `json:"fairSharing"`
	}
	if err := yaml.Unmarshal(merged, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Namespace != KueueNamespace || cfg.Webhook.Host != "127.0.0.1" || cfg.Webhook.Port != 7443 || cfg.Webhook.CertDir != "/out/kueue-certs" ||
		strings.Join(cfg.Integrations.Frameworks, ",") != "batch/job,pod" || strings.Join(cfg.FairSharing.PreemptionStrategies, ",") != "LessThanInitialShare" {
		t.Errorf("merged configuration:\n%s", merged)
	}
	if _, err := mergeYAML([]byte(base), []byte("- a list")); err == nil {
		t.Error("an overlay that is not a mapping: no error")
	}
}
