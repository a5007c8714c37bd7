package translate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"
)

// Annotations of the objects and pods of a run: when a manifest's object is
// created and deleted (seconds of simulated time), how long a pod created
// through the API runs (seconds) and the code it exits with.
const (
	CreateAtAnnotation = "batkube.io/create-at"
	DeleteAtAnnotation = "batkube.io/delete-at"
	DelayAnnotation    = "batkube.io/delay"
	ExitCodeAnnotation = "batkube.io/exit-code"
)

// The profile fields that make a workload's job a Kubernetes object.
const (
	// KubeJobField holds a batch/v1 JobSpec without its template
	// (completions, parallelism, backoffLimit, podFailurePolicy,
	// activeDeadlineSeconds...): the job is a Job, created at its
	// submission time, whose pods are the profile's (its requests,
	// pod_template, delay and ret).
	KubeJobField = "kube_job"
	// KubeDeploymentField holds an apps/v1 DeploymentSpec without its
	// template and selector (replicas, strategy...): the job is a
	// Deployment, created at its submission time and deleted at the end
	// of its profile's delay, whose pods run until then.
	KubeDeploymentField = "kube_deployment"
)

// KubeWorkload is a Batsim workload split in two: the jobs Batsim runs,
// and the Kubernetes objects that its kube_job and kube_deployment jobs
// stand for, whose controllers' pods become Batsim jobs as they are
// created (dynamic jobs).
type KubeWorkload struct {
	// Workload is the workload's JSON without those jobs.
	Workload []byte
	// Objects are the Jobs and Deployments, annotated with the instants
	// they are created (and deleted) at, in the workload's order.
	Objects []runtime.Object
}

// SplitKubeWorkload splits the workload (its JSON) named name ("w0", as
// Batsim names a run's workloads in order) into the jobs Batsim runs and
// the Kubernetes objects of the jobs whose profile has a kube_job or a
// kube_deployment field. An object is named after its job as its pod
// would be (PodName of "name!id"). Workloads without such jobs come back
// unchanged, with no objects.
func SplitKubeWorkload(name string, data []byte, opts PodOptions) (KubeWorkload, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return KubeWorkload{}, fmt.Errorf("translate: workload %s: %w", name, err)
	}
	var profiles map[string]map[string]json.RawMessage
	if raw, ok := doc["profiles"]; ok {
		if err := json.Unmarshal(raw, &profiles); err != nil {
			return KubeWorkload{}, fmt.Errorf("translate: workload %s: profiles: %w", name, err)
		}
	}
	kube := map[string]bool{}
	for pname, p := range profiles {
		_, job := p[KubeJobField]
		_, dep := p[KubeDeploymentField]
		if job && dep {
			return KubeWorkload{}, fmt.Errorf("translate: workload %s: profile %s: %s and %s: give one", name, pname, KubeJobField, KubeDeploymentField)
		}
		kube[pname] = job || dep
	}
	var jobs []json.RawMessage
	if raw, ok := doc["jobs"]; ok {
		if err := json.Unmarshal(raw, &jobs); err != nil {
			return KubeWorkload{}, fmt.Errorf("translate: workload %s: jobs: %w", name, err)
		}
	}
	var kept []json.RawMessage
	var objects []runtime.Object
	for i, raw := range jobs {
		var head struct {
			ID       json.RawMessage `json:"id"`
			Subtime  float64         `json:"subtime"`
			Profile  string          `json:"profile"`
			Walltime *float64        `json:"walltime"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return KubeWorkload{}, fmt.Errorf("translate: workload %s: job %d: %w", name, i, err)
		}
		if !kube[head.Profile] {
			kept = append(kept, raw)
			continue
		}
		id := string(bytes.Trim(head.ID, `"`))
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return KubeWorkload{}, fmt.Errorf("translate: workload %s: job %s: %w", name, id, err)
		}
		job := Job{ID: name + "!" + id, Res: 1, Fields: fields, Profile: profiles[head.Profile]}
		if head.Walltime != nil {
			job.Walltime = *head.Walltime
		}
		obj, err := kubeObject(job, head.Subtime, opts)
		if err != nil {
			return KubeWorkload{}, fmt.Errorf("translate: workload %s: job %s (profile %s): %w", name, id, head.Profile, err)
		}
		objects = append(objects, obj)
	}
	if len(objects) == 0 {
		return KubeWorkload{Workload: data}, nil
	}
	if kept == nil {
		kept = []json.RawMessage{}
	}
	var err error
	if doc["jobs"], err = json.Marshal(kept); err != nil {
		return KubeWorkload{}, err
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return KubeWorkload{}, err
	}
	return KubeWorkload{Workload: append(out, '\n'), Objects: objects}, nil
}

// kubeObject returns the Job or Deployment of a workload's job submitted at
// subtime.
func kubeObject(job Job, subtime float64, opts PodOptions) (runtime.Object, error) {
	if subtime < 0 || math.IsNaN(subtime) || math.IsInf(subtime, 0) {
		return nil, fmt.Errorf("subtime %v: want a finite number of seconds >= 0", subtime)
	}
	var typ string
	var delay, ret float64
	for field, v := range map[string]any{"type": &typ, "delay": &delay, "ret": &ret} {
		if raw, ok := job.Profile[field]; ok {
			if err := json.Unmarshal(raw, v); err != nil {
				return nil, fmt.Errorf("profile field %s: %w", field, err)
			}
		}
	}
	if typ != "delay" {
		return nil, fmt.Errorf("a %s or %s profile must be of type delay (its pods' duration), not %q", KubeJobField, KubeDeploymentField, typ)
	}
	if delay < 0 || math.IsInf(delay, 0) || math.IsNaN(delay) {
		return nil, fmt.Errorf("profile field delay: %v, want a finite number of seconds >= 0", delay)
	}
	if ret != math.Trunc(ret) || ret < 0 || ret > 255 {
		return nil, fmt.Errorf("profile field ret: %v, want an exit code from 0 to 255", ret)
	}
	pods, err := Pods(Job{ID: job.ID, Res: 1, Walltime: job.Walltime, Fields: job.Fields, Profile: job.Profile}, opts)
	if err != nil {
		return nil, err
	}
	pod := pods[0]
	name := pod.Name
	delete(pod.Labels, JobLabel)
	delete(pod.Annotations, JobIDKey)
	meta := metav1.ObjectMeta{Name: name, Namespace: pod.Namespace,
		Annotations: map[string]string{CreateAtAnnotation: formatSeconds(subtime), JobIDKey: job.ID}}
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: pod.Labels, Annotations: pod.Annotations}, Spec: pod.Spec}
	if raw, ok := job.Profile[KubeJobField]; ok {
		var spec batchv1.JobSpec
		if err := decodeStrict(raw, &spec); err != nil {
			return nil, fmt.Errorf("profile field %s is not a JobSpec: %w", KubeJobField, err)
		}
		if template.Annotations == nil {
			template.Annotations = map[string]string{}
		}
		template.Annotations[DelayAnnotation] = formatSeconds(delay)
		if ret != 0 {
			template.Annotations[ExitCodeAnnotation] = strconv.Itoa(int(ret))
		}
		if template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
			template.Spec.RestartPolicy = corev1.RestartPolicyNever
		}
		spec.Template = template // the workload's walltime is its pods' deadline
		return &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: meta, Spec: spec}, nil
	}
	var spec appsv1.DeploymentSpec
	if err := decodeStrict(job.Profile[KubeDeploymentField], &spec); err != nil {
		return nil, fmt.Errorf("profile field %s is not a DeploymentSpec: %w", KubeDeploymentField, err)
	}
	if template.Labels == nil {
		template.Labels = map[string]string{}
	}
	template.Labels["app"] = name
	template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	WithoutDeadline(&template.Spec)
	spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	spec.Template = template
	meta.Annotations[DeleteAtAnnotation] = formatSeconds(subtime + delay)
	return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: meta, Spec: spec}, nil
}

func formatSeconds(s float64) string { return strconv.FormatFloat(s, 'f', -1, 64) }

// decodeStrict decodes JSON as the API server does a strict request: case
// sensitive, unknown and duplicate fields refused.
func decodeStrict(raw json.RawMessage, v any) error {
	strict, err := kjson.UnmarshalStrict(raw, v, kjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		return errors.Join(strict...)
	}
	return nil
}
