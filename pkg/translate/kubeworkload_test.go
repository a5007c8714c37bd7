package translate

import (
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

const kubeWorkload = `{
  "nb_res": 4,
  "jobs": [
    {"id": "plain", "subtime": 0, "res": 1, "profile": "d10"},
    {"id": "train", "subtime": 12.5, "res": 1, "profile": "train", "walltime": 100},
    {"id": 7, "subtime": 20, "res": 1, "profile": "web"}
  ],
  "profiles": {
    "d10": {"type": "delay", "delay": 10},
    "train": {"type": "delay", "delay": 30, "cpu": 2, "memory": "1Gi", "ret": 42,
              "kube_job": {"completions": 4, "parallelism": 2, "backoffLimit": 1,
                           "podFailurePolicy": {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]}}},
    "web": {"type": "delay", "delay": 600, "cpu": 1, "kube_deployment": {"replicas": 3},
            "pod_template": {"metadata": {"labels": {"tier": "front"}}, "spec": {"priorityClassName": "high"}}}
  }
}`

func TestSplitKubeWorkload(t *testing.T) {
	split, err := SplitKubeWorkload("w0", []byte(kubeWorkload), PodOptions{ExclusiveHosts: true})
	if err != nil {
		t.Fatal(err)
	}
	var rest struct {
		NbRes    int                        `json:"nb_res"`
		Jobs     []map[string]any           `json:"jobs"`
		Profiles map[string]json.RawMessage `json:"profiles"`
	}
	if err := json.Unmarshal(split.Workload, &rest); err != nil {
		t.Fatal(err)
	}
	if rest.NbRes != 4 || len(rest.Jobs) != 1 || rest.Jobs[0]["id"] != "plain" || len(rest.Profiles) != 3 {
		t.Fatalf("Batsim's workload: %s", split.Workload)
	}
	if len(split.Objects) != 2 {
		t.Fatalf("%d objects, want 2", len(split.Objects))
	}
	job, ok := split.Objects[0].(*batchv1.Job)
	if !ok {
		t.Fatalf("first object %T, want a Job", split.Objects[0])
	}
	if job.Name != "w0-train" || job.Namespace != "default" || job.Annotations[CreateAtAnnotation] != "12.5" {
		t.Errorf("Job meta: %+v", job.ObjectMeta)
	}
	if *job.Spec.Completions != 4 || *job.Spec.Parallelism != 2 || *job.Spec.BackoffLimit != 1 ||
		job.Spec.PodFailurePolicy == nil || job.Spec.PodFailurePolicy.Rules[0].OnExitCodes.Values[0] != 42 {
		t.Errorf("Job spec: %+v", job.Spec)
	}
	tpl := job.Spec.Template
	req := tpl.Spec.Containers[0].Resources.Requests
	if tpl.Annotations[DelayAnnotation] != "30" || tpl.Annotations[ExitCodeAnnotation] != "42" ||
		tpl.Spec.RestartPolicy != corev1.RestartPolicyNever || req.Cpu().String() != "2" || req.Memory().String() != "1Gi" ||
		tpl.Spec.ActiveDeadlineSeconds == nil || *tpl.Spec.ActiveDeadlineSeconds != 100 {
		t.Errorf("Job template: %+v", tpl)
	}
	if _, ok := tpl.Labels[JobLabel]; ok {
		t.Errorf("the template carries the static job's label: %v", tpl.Labels)
	}
	dep, ok := split.Objects[1].(*appsv1.Deployment)
	if !ok {
		t.Fatalf("second object %T, want a Deployment", split.Objects[1])
	}
	if dep.Name != "w0-7" || dep.Annotations[CreateAtAnnotation] != "20" || dep.Annotations[DeleteAtAnnotation] != "620" ||
		*dep.Spec.Replicas != 3 || dep.Spec.Selector.MatchLabels["app"] != "w0-7" {
		t.Errorf("Deployment: %+v %+v", dep.ObjectMeta, dep.Spec)
	}
	dt := dep.Spec.Template
	if dt.Labels["app"] != "w0-7" || dt.Labels["tier"] != "front" || dt.Spec.PriorityClassName != "high" ||
		dt.Spec.RestartPolicy != corev1.RestartPolicyAlways || dt.Annotations[DelayAnnotation] != "" {
		t.Errorf("Deployment template: %+v", dt)
	}
}

func TestSplitKubeWorkloadWithoutKubeJobsIsUnchanged(t *testing.T) {
	in := `{"nb_res": 1, "jobs": [{"id": "a", "subtime": 0, "res": 1, "profile": "d"}], "profiles": {"d": {"type": "delay", "delay": 1}}}`
	split, err := SplitKubeWorkload("w0", []byte(in), PodOptions{})
	if err != nil || string(split.Workload) != in || len(split.Objects) != 0 {
		t.Fatalf("got %s, %d objects, %v", split.Workload, len(split.Objects), err)
	}
}

func TestSplitKubeWorkloadErrors(t *testing.T) {
	for name, profile := range map[string]string{
		"both kinds":       `{"type": "delay", "delay": 1, "kube_job": {}, "kube_deployment": {}}`,
		"not a delay":      `{"type": "parallel_homogeneous", "cpu": 1e9, "com": 0, "kube_job": {}}`,
		"bad spec":         `{"type": "delay", "delay": 1, "kube_job": {"completions": "four"}}`,
		"bad exit code":    `{"type": "delay", "delay": 1, "ret": 300, "kube_job": {}}`,
		"negative delay":   `{"type": "delay", "delay": -1, "kube_job": {}}`,
		"unknown field":    `{"type": "delay", "delay": 1, "kube_job": {"completion": 4}}`,
		"bad deployment":   `{"type": "delay", "delay": 1, "kube_deployment": {"replicas": "x"}}`,
		"bad pod template": `{"type": "delay", "delay": 1, "kube_job": {}, "pod_template": {"spec": 3}}`,
	} {
		in := `{"nb_res": 1, "jobs": [{"id": "a", "subtime": 0, "res": 1, "profile": "p"}], "profiles": {"p": ` + profile + `}}`
		if _, err := SplitKubeWorkload("w0", []byte(in), PodOptions{}); err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.Contains(err.Error(), "w0") {
			t.Errorf("%s: %v does not name the workload", name, err)
		}
	}
}
