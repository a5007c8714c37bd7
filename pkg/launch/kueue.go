package launch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/batkube/batkube/pkg/atomicfile"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Kueue's manager in a run (Config.Kueue).
const (
	// KueueProcess names Kueue's manager in Summary.Processes and its log,
	// OutDir/kueue.log.
	KueueProcess = "kueue"
	// KueueManifests, in BinDir, are Kueue's installation manifests (make
	// upstream: kustomize's build of the module's config/default).
	KueueManifests = "kueue-manifests.yaml"
	// KueueNamespace is where Kueue's installation lives.
	KueueNamespace = "kueue-system"
	// kueueWebhookService is the Service its webhook configurations name,
	// kueueWebhookSecret the Secret of its webhook server's certificate.
	kueueWebhookService = "kueue-webhook-service"
	kueueWebhookSecret  = "kueue-webhook-server-cert"
)

// kueueFiles are the files of a run with Kueue, in OutDir.
const (
	kueueConfigFile   = "kueue-config.yaml"
	kueueInstallFile  = "kueue-install.yaml"  // namespace, CRDs, webhook Service and its endpoint
	kueueWebhooksFile = "kueue-webhooks.yaml" // webhook configurations, created after the run's objects
	kueueCertDir      = "kueue-certs"
)

// kueueInstall sorts the objects of Kueue's manifests: install are those a
// simulated cluster needs before Kueue starts (its namespace, CRDs,
// webhook Service and Secret), webhooks its admission webhook
// configurations (created after the run's own objects: a ClusterQueue of
// the run's manifests is created before Kueue runs, and its webhooks would
// refuse it). The rest — Kueue's Deployment (Batkube starts the manager
// itself), RBAC (Batkube authorises every request), the visibility
// APIService (not served), metrics Services, its ConfigMap (the run writes
// its own configuration) — is left out.
func kueueInstall(manifests []byte, webhookPort int) (install, webhooks []map[string]any, err error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifests), 4096)
	var webhookService map[string]any
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, nil, fmt.Errorf("Kueue's manifests: %w", err)
		}
		if obj == nil {
			continue
		}
		u := unstructured.Unstructured{Object: obj}
		switch u.GetKind() {
		case "Namespace", "CustomResourceDefinition", "Secret":
			install = append(install, obj)
		case "Service":
			if u.GetName() == kueueWebhookService {
				install = append(install, obj)
				webhookService = obj
			}
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			webhooks = append(webhooks, obj)
		}
	}
	if webhookService == nil || len(webhooks) == 0 {
		return nil, nil, fmt.Errorf("Kueue's manifests have no Service %s or no webhook configuration", kueueWebhookService)
	}
	// The Service's endpoint is the manager on this machine.
	ports, _, _ := unstructured.NestedSlice(webhookService, "spec", "ports")
	var slicePorts []any
	for _, p := range ports {
		pm, _ := p.(map[string]any)
		sp := map[string]any{"port": int64(webhookPort), "protocol": "TCP"}
		if name, ok := pm["name"].(string); ok {
			sp["name"] = name
		}
		slicePorts = append(slicePorts, sp)
	}
	install = append(install, map[string]any{
		"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
		"metadata": map[string]any{"name": kueueWebhookService + "-local", "namespace": KueueNamespace,
			"labels": map[string]any{"kubernetes.io/service-name": kueueWebhookService}},
		"addressType": "IPv4",
		"endpoints":   []any{map[string]any{"addresses": []any{"127.0.0.1"}, "conditions": map[string]any{"ready": true}}},
		"ports":       slicePorts,
	})
	return install, webhooks, nil
}

// writeYAMLDocs writes objects as one YAML stream.
func writeYAMLDocs[T any](path string, objs []T) error {
	var buf bytes.Buffer
	for _, o := range objs {
		data, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		buf.WriteString("---\n")
		buf.Write(data)
	}
	return atomicfile.Write(path, buf.Bytes())
}

// kueueConfig is the manager's configuration for a run: alone (no leader
// election), in KueueNamespace, its webhooks on webhookPort with the
// certificates it makes itself (internal certificate management, which
// writes the caBundle of the webhook configurations), its probes on
// healthPort, no metrics server (the run watches its process), batch/v1
// Jobs as its only integration, no client-side rate limit (the server is
// in memory), and no visibility API server (Batkube serves no aggregated
// APIs).
func kueueConfig(outDir string, webhookPort, healthPort int) string {
	return fmt.Sprintf(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: %s
health:
  healthProbeBindAddress: 127.0.0.1:%d
metrics:
  bindAddress: "0"
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: true
  webhookServiceName: %s
  webhookSecretName: %s
clientConnection:
  qps: 5000
  burst: 5000
integrations:
  frameworks:
  - batch/job
featureGates:
  VisibilityOnDemand: false
`, KueueNamespace, healthPort, webhookPort, strconv.Quote(filepath.Join(outDir, kueueCertDir)), kueueWebhookService, kueueWebhookSecret)
}

// mergeYAML merges the mapping overlay into base: a key of both whose
// values are mappings is merged, any other value of overlay replaces
// base's.
func mergeYAML(base, overlay []byte) ([]byte, error) {
	var b, o map[string]any
	if err := yaml.Unmarshal(base, &b); err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(overlay, &o); err != nil {
		return nil, err
	}
	return yaml.Marshal(mergeMaps(b, o))
}

func mergeMaps(base, overlay map[string]any) map[string]any {
	if base == nil {
		base = map[string]any{}
	}
	for k, v := range overlay {
		om, oIsMap := v.(map[string]any)
		bm, bIsMap := base[k].(map[string]any)
		if oIsMap && bIsMap {
			base[k] = mergeMaps(bm, om)
			continue
		}
		base[k] = v
	}
	return base
}

// prepareKueue writes Kueue's objects and configuration for the run, and
// adds the objects to the server's: its installation before the run's
// objects, its webhook configurations after them.
func (r *run) prepareKueue() error {
	if !r.cfg.Kueue {
		return nil
	}
	r.cfg.ControllerManager = true // Jobs need their controller
	if _, err := r.bin(KueueProcess); err != nil {
		return err
	}
	manifests, err := os.ReadFile(filepath.Join(r.cfg.BinDir, KueueManifests))
	if err != nil {
		return fmt.Errorf("launch: Kueue's manifests: %w (make upstream writes them)", err)
	}
	if r.kueue.webhookPort, err = r.port(); err != nil {
		return err
	}
	if r.kueue.healthPort, err = r.port(); err != nil {
		return err
	}
	install, webhooks, err := kueueInstall(manifests, r.kueue.webhookPort)
	if err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	installFile, webhooksFile := filepath.Join(r.cfg.OutDir, kueueInstallFile), filepath.Join(r.cfg.OutDir, kueueWebhooksFile)
	if err := writeYAMLDocs(installFile, install); err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	if err := writeYAMLDocs(webhooksFile, webhooks); err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	config := []byte(kueueConfig(r.cfg.OutDir, r.kueue.webhookPort, r.kueue.healthPort))
	if r.cfg.KueueConfig != "" {
		overlay, err := os.ReadFile(r.cfg.KueueConfig)
		if err != nil {
			return fmt.Errorf("launch: Kueue's configuration: %w", err)
		}
		if config, err = mergeYAML(config, overlay); err != nil {
			return fmt.Errorf("launch: Kueue's configuration %s: %w", r.cfg.KueueConfig, err)
		}
	}
	if err := atomicfile.Write(filepath.Join(r.cfg.OutDir, kueueConfigFile), config); err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	r.cfg.Objects = append(append([]string{installFile}, r.cfg.Objects...), webhooksFile)
	return nil
}

// kueuePIDFile is where Kueue's manager's PID is written for the server
// (kubernetes-server --controller-pid-file kueue=FILE).
func (r *run) kueuePIDFile() string { return filepath.Join(r.cfg.OutDir, KueueProcess+".pid") }

// startKueue starts BinDir/kueue with the run's configuration, on the run's
// simulated clock (like kube-controller-manager), and waits until it is
// ready: its certificates made and its webhooks served, so that the Jobs
// created from the first step on go through them. (Its certificate manager
// checks for them with a back-off of 1 s doubling: a few seconds here; the
// limit of 5 minutes only ends a start that will not come.)
func (r *run) startKueue(ctx context.Context) error {
	if !r.cfg.Kueue {
		return nil
	}
	bin, err := r.bin(KueueProcess)
	if err != nil {
		return err
	}
	args := append([]string{bin, "--config", filepath.Join(r.cfg.OutDir, kueueConfigFile), "--zap-log-level=info"}, r.cfg.KueueArgs...)
	p, err := r.startController(KueueProcess, r.kueuePIDFile(), args)
	if err != nil {
		return err
	}
	mountCtx, stopMounting := context.WithCancel(ctx)
	defer stopMounting()
	mounted := make(chan error, 1)
	go func() {
		mounted <- mountSecret(mountCtx, r.apiURL, KueueNamespace, kueueWebhookSecret, filepath.Join(r.cfg.OutDir, kueueCertDir))
	}()
	err = waitReady(ctx, fmt.Sprintf("http://127.0.0.1:%d/readyz", r.kueue.healthPort), p, "Kueue's manager", 5*time.Minute)
	stopMounting()
	if merr := <-mounted; err != nil && merr != nil && !errors.Is(merr, context.Canceled) {
		return fmt.Errorf("%w (mounting its certificates' Secret: %v)", err, merr)
	}
	return err
}

// mountSecret plays the kubelet's part for a Secret volume: it writes each
// key of the Secret namespace/name to a file of dir whenever the Secret
// changes, until ctx ends. Kueue's certificate management writes its
// webhook server's certificate to its Secret and waits until it appears,
// mounted, in its certificate directory.
func mountSecret(ctx context.Context, apiURL, namespace, name, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	url := fmt.Sprintf("%s/api/v1/namespaces/%s/secrets/%s", apiURL, namespace, name)
	client := &http.Client{Timeout: 5 * time.Second}
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	lastRV := ""
	for {
		secret, err := getSecret(ctx, client, url)
		if err == nil && secret.ResourceVersion != lastRV {
			for key, value := range secret.Data {
				if err := atomicfile.Write(filepath.Join(dir, key), value); err != nil {
					return err
				}
			}
			lastRV = secret.ResourceVersion
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-poll.C:
		}
	}
}

func getSecret(ctx context.Context, client *http.Client, url string) (*corev1.Secret, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	var secret corev1.Secret
	if err := json.NewDecoder(resp.Body).Decode(&secret); err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	return &secret, nil
}
