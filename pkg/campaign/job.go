package campaign

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// JobOptions shape the Kubernetes Job of a campaign.
type JobOptions struct {
	// Name names the Job and its ConfigMap.
	Name      string
	Namespace string // "" for the kubeconfig's
	// Image is the container image (examples/campaign/Dockerfile): its
	// working directory holds bin/ and examples/, so that the campaign
	// file's relative paths resolve there.
	Image string
	// Parallelism is how many runs run at once (pods).
	Parallelism int
	// OutputClaim is the PersistentVolumeClaim the outputs go to, under
	// OUT = /out/<Name>; with parallelism above one on several nodes it
	// must be ReadWriteMany.
	OutputClaim string
	// RetriesPerRun is how many times a failed run is retried
	// (backoffLimitPerIndex): a failure does not stop the other runs.
	RetriesPerRun int
	// CPU and Memory are each pod's requests: a run is three processes
	// (API server, scheduler, simulator).
	CPU, Memory string
	// Args are more batkube-campaign flags for every run (e.g. --batsim).
	Args []string
}

// Where the Job's pods find the campaign file and write the outputs.
const (
	jobCampaignDir = "/etc/batkube-campaign"
	jobCampaignKey = "campaign.yaml"
	jobOutDir      = "/out"
)

// JobOut is the folder of the outputs in the Job's volume.
func (o JobOptions) JobOut() string { return path.Join(jobOutDir, o.Name) }

// EmitJob writes the manifest that runs the campaign on a Kubernetes
// cluster: a batch/v1 Job in Indexed completion mode, one completion per
// run (pod K runs `batkube-campaign --index K`, reading K from
// JOB_COMPLETION_INDEX, which the Job controller sets), and, as a second
// document, the ConfigMap that holds the campaign file as it is (data),
// so that index K names the same run as here.
func EmitJob(w io.Writer, c *Campaign, data []byte, o JobOptions) error {
	if errs := validation.IsDNS1123Subdomain(o.Name); len(errs) > 0 {
		return fmt.Errorf("campaign: job name %q: %s", o.Name, strings.Join(errs, "; "))
	}
	runs := len(c.Runs())
	// The pods are named <job>-<index>-<suffix>: the API server refuses a
	// Job whose highest index would not make a valid hostname.
	if errs := validation.IsDNS1123Label(fmt.Sprintf("%s-%d", o.Name, runs-1)); len(errs) > 0 {
		return fmt.Errorf("campaign: job name %q is too long for %d pods: %s", o.Name, runs, strings.Join(errs, "; "))
	}
	switch {
	case o.Image == "":
		return fmt.Errorf("campaign: no image")
	case o.OutputClaim == "":
		return fmt.Errorf("campaign: no output claim (a PersistentVolumeClaim for the outputs)")
	case o.Parallelism < 1:
		return fmt.Errorf("campaign: parallelism %d: want at least 1", o.Parallelism)
	case o.RetriesPerRun < 0:
		return fmt.Errorf("campaign: retries per run %d: want at least 0", o.RetriesPerRun)
	}
	requests := corev1.ResourceList{}
	for name, q := range map[corev1.ResourceName]string{corev1.ResourceCPU: o.CPU, corev1.ResourceMemory: o.Memory} {
		if q == "" {
			continue
		}
		v, err := resource.ParseQuantity(q)
		if err != nil {
			return fmt.Errorf("campaign: %s request %q: %w", name, q, err)
		}
		requests[name] = v
	}
	labels := map[string]string{"app.kubernetes.io/name": "batkube-campaign", "app.kubernetes.io/instance": o.Name}
	meta := metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Labels: labels}
	args := append([]string{"--out", o.JobOut()}, o.Args...)
	args = append(args, path.Join(jobCampaignDir, jobCampaignKey))
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			CompletionMode:       ptr.To(batchv1.IndexedCompletion),
			Completions:          ptr.To(int32(runs)),
			Parallelism:          ptr.To(int32(min(o.Parallelism, runs))),
			BackoffLimitPerIndex: ptr.To(int32(o.RetriesPerRun)),
			// A retry starts once the failed pod is gone: never two pods
			// writing one run's folder.
			PodReplacementPolicy: ptr.To(batchv1.Failed),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name:            "run",
						Image:           o.Image,
						ImagePullPolicy: corev1.PullIfNotPresent,
						Command:         []string{"batkube-campaign"},
						Args:            args,
						Resources:       corev1.ResourceRequirements{Requests: requests},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "campaign", MountPath: jobCampaignDir, ReadOnly: true},
							{Name: "out", MountPath: jobOutDir},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "campaign", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: o.Name}}}},
						{Name: "out", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
							ClaimName: o.OutputClaim}}},
					},
				},
			},
		},
	}
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta,
		Data:       map[string]string{jobCampaignKey: string(data)},
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# batkube-campaign as a Kubernetes Indexed Job: %s, %d at a time.\n", c.Describe(), min(o.Parallelism, runs))
	fmt.Fprintf(&b, "# Pod K runs run K (JOB_COMPLETION_INDEX); outputs in the claim %s under %s/<run>.\n", o.OutputClaim, o.JobOut())
	fmt.Fprintf(&b, "# Then copy %s out and: batkube-campaign --report-only -o <copy> CAMPAIGN.yaml\n", o.JobOut())
	for i, obj := range []any{job, cm} {
		doc, err := yaml.Marshal(obj)
		if err != nil {
			return fmt.Errorf("campaign: %w", err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(doc)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// JobName is a Job name made of the campaign file's base name.
func JobName(file string) string {
	base := filepath.Base(file)
	s := slug(strings.TrimSuffix(base, filepath.Ext(base)))
	s = strings.NewReplacer("_", "-", "+", "-", ".", "-").Replace(s)
	name := "batkube-campaign-" + strings.Trim(s, "-")
	if len(name) > 40 {
		name = strings.TrimRight(name[:40], "-")
	}
	return strings.TrimSuffix(name, "-")
}
