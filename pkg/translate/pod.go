package translate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	kjson "sigs.k8s.io/json"
)

// Job is a Batsim job with its profile, as JOB_SUBMITTED and
// SIMULATION_BEGINS describe them.
type Job struct {
	ID       string  // "workload!id"
	Res      int     // number of hosts asked for
	Walltime float64 // seconds; <= 0 means none
	// Fields are the job's JSON fields (including user-defined ones).
	Fields map[string]json.RawMessage
	// Profile is the profile object of the job.
	Profile map[string]json.RawMessage
	// ProfileKey, if set, names the profile for PodOptions.Profiles (a
	// workload's profile: "workload/name"): jobs of the same key share it.
	ProfileKey string
}

// Profiles keeps the profiles of jobs parsed, by Job.ProfileKey, so that
// the many jobs of a profile do not parse it again. Not safe for
// concurrent use.
type Profiles struct{ byKey map[string]*profile }

// NewProfiles returns an empty cache of profiles.
func NewProfiles() *Profiles { return &Profiles{byKey: map[string]*profile{}} }

// Has reports whether the profile of key is parsed already: a job of that
// key then needs no Job.Profile.
func (c *Profiles) Has(key string) bool {
	if c == nil {
		return false
	}
	_, ok := c.byKey[key]
	return ok
}

// profile is a profile as the translation reads it.
type profile struct {
	fields   profileFields
	requests corev1.ResourceList
	// template is the profile's pod_template, nil without one (shared:
	// copied before use).
	template *corev1.Pod
}

// parseProfile reads the fields of a job's profile that the translation
// uses.
func parseProfile(job Job) (*profile, error) {
	pf, err := readProfileFields(job.Profile)
	if err != nil {
		return nil, fmt.Errorf("translate: job %s: %w", job.ID, err)
	}
	requests, err := profileRequests(pf)
	if err != nil {
		return nil, fmt.Errorf("translate: job %s: %w", job.ID, err)
	}
	p := &profile{fields: pf, requests: requests}
	if raw, ok := job.Profile["pod_template"]; ok {
		if p.template, err = decodePod(raw); err != nil {
			return nil, fmt.Errorf("translate: job %s: the profile's pod_template is not a pod: %w", job.ID, err)
		}
	}
	return p, nil
}

// profileOf returns the job's profile, parsed once per ProfileKey when c
// is not nil.
func (c *Profiles) profileOf(job Job) (*profile, error) {
	if c == nil || job.ProfileKey == "" {
		return parseProfile(job)
	}
	if p, ok := c.byKey[job.ProfileKey]; ok {
		return p, nil
	}
	p, err := parseProfile(job)
	if err != nil {
		return nil, err
	}
	c.byKey[job.ProfileKey] = p
	return p, nil
}

// templateOf returns the job's profile and a copy of its pod template (see
// podTemplate).
func (c *Profiles) templateOf(job Job) (*profile, *corev1.Pod, error) {
	prof, err := c.profileOf(job)
	if err != nil {
		return nil, nil, err
	}
	tmpl, err := podTemplate(job, prof)
	if err != nil {
		return nil, nil, err
	}
	return prof, tmpl, nil
}

// PodOptions are the defaults of the pods of jobs.
type PodOptions struct {
	Namespace     string // default "default"
	SchedulerName string // used when the job names none; default "default-scheduler"
	Image         string // container image; default "batkube/job"
	// Gangs groups the pods of multi-host jobs (default GangsOff).
	Gangs Gangs
	// ExclusiveHosts makes the pods of a job that requests no resource
	// (a Batsim job whose profile gives no cpu or memory, as in Batsim's
	// own workloads) ask for one HostResource each: every node has one, so
	// such a job holds its hosts alone, as a Batsim job holds its res
	// hosts, instead of being packed with others onto any node.
	ExclusiveHosts bool
	// Profiles, if set, caches the jobs' profiles by Job.ProfileKey.
	Profiles *Profiles
}

// profile fields read by the translation (the 2020 prototype's vocabulary).
type profileFields struct {
	CPU       *json.RawMessage `json:"cpu"`
	Memory    *json.RawMessage `json:"memory"`
	Scheduler string           `json:"scheduler"`
}

// Pods returns the pods of a job: one for res <= 1, else res pods that share
// the JobLabel (and, with opts.Gangs, reference the job's PodGroup).
func Pods(job Job, opts PodOptions) ([]*corev1.Pod, error) {
	opts.Namespace = namespace(opts)
	if opts.Image == "" {
		opts.Image = "batkube/job"
	}
	prof, base, err := opts.Profiles.templateOf(job)
	if err != nil {
		return nil, err
	}
	name := PodName(job.ID)
	pf, requests := prof.fields, prof.requests
	base.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	base.Namespace = opts.Namespace
	if base.Labels == nil {
		base.Labels = map[string]string{}
	}
	base.Labels[JobLabel] = name
	if base.Annotations == nil {
		base.Annotations = map[string]string{}
	}
	base.Annotations[JobIDKey] = job.ID
	if base.Spec.SchedulerName == "" {
		base.Spec.SchedulerName = pf.Scheduler
	}
	if base.Spec.SchedulerName == "" {
		base.Spec.SchedulerName = opts.SchedulerName
	}
	if len(base.Spec.Containers) == 0 {
		base.Spec.Containers = []corev1.Container{{Name: "job", Image: opts.Image}}
	}
	c := &base.Spec.Containers[0]
	if c.Image == "" {
		c.Image = opts.Image
	}
	for k, v := range requests {
		if c.Resources.Requests == nil {
			c.Resources.Requests = corev1.ResourceList{}
		}
		if _, set := c.Resources.Requests[k]; !set {
			c.Resources.Requests[k] = v
		}
	}
	if opts.ExclusiveHosts && requestsNothing(base) {
		one := *resource.NewQuantity(1, resource.DecimalSI)
		c.Resources.Requests = corev1.ResourceList{HostResource: one}
		c.Resources.Limits = corev1.ResourceList{HostResource: one.DeepCopy()} // an extended resource's limit equals its request
	}
	base.Spec.ActiveDeadlineSeconds = Deadline(job.Walltime)
	if base.Spec.RestartPolicy == "" {
		base.Spec.RestartPolicy = corev1.RestartPolicyNever
	}
	if gang(job, opts) {
		joinPodGroup(base, job.ID)
	}
	n := max(job.Res, 1)
	if n == 1 {
		base.Name = name
		return []*corev1.Pod{base}, nil
	}
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		p := base.DeepCopy()
		p.Name = fmt.Sprintf("%s-%d", name, i)
		p.Annotations[GroupSizeKey] = strconv.Itoa(n)
		p.Annotations[GroupIndexKey] = strconv.Itoa(i)
		pods[i] = p
	}
	return pods, nil
}

// requestsNothing reports whether no container of pod requests or limits
// any resource.
func requestsNothing(pod *corev1.Pod) bool {
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, c := range cs {
			if len(c.Resources.Requests) > 0 || len(c.Resources.Limits) > 0 {
				return false
			}
		}
	}
	return len(pod.Spec.Overhead) == 0
}

// podTemplate returns a copy of the job's or the profile's pod_template
// (the job's wins, even null: no template), or an empty pod.
func podTemplate(job Job, prof *profile) (*corev1.Pod, error) {
	if raw, ok := job.Fields["pod_template"]; ok {
		pod, err := decodePod(raw)
		if err != nil {
			return nil, fmt.Errorf("translate: job %s: the job's pod_template is not a pod: %w", job.ID, err)
		}
		if pod == nil {
			pod = &corev1.Pod{}
		}
		return pod, nil
	}
	if prof.template != nil {
		return prof.template.DeepCopy(), nil
	}
	return &corev1.Pod{}, nil
}

// decodePod decodes a pod_template (nil for JSON null).
func decodePod(raw json.RawMessage) (*corev1.Pod, error) {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	pod := &corev1.Pod{}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, pod); err != nil {
		return nil, err
	}
	return pod, nil
}

func readProfileFields(profile map[string]json.RawMessage) (profileFields, error) {
	var pf profileFields
	var typ string
	if v, ok := profile["type"]; ok {
		if err := json.Unmarshal(v, &typ); err != nil {
			return pf, fmt.Errorf("profile field type: want a string: %w", err)
		}
	}
	// In computing profiles (parallel_homogeneous, ...) "cpu" is flops, not cores.
	if v, ok := profile["cpu"]; ok && (typ == "" || typ == "delay") {
		pf.CPU = &v
	}
	if v, ok := profile["memory"]; ok {
		pf.Memory = &v
	}
	if v, ok := profile["scheduler"]; ok {
		if err := json.Unmarshal(v, &pf.Scheduler); err != nil {
			return pf, fmt.Errorf("profile field scheduler: want a string: %w", err)
		}
	}
	return pf, nil
}

// profileRequests turns the cpu (cores) and memory fields into requests.
func profileRequests(pf profileFields) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	if pf.CPU != nil {
		q, err := quantity(*pf.CPU)
		if err != nil {
			return nil, fmt.Errorf("profile field cpu: %w", err)
		}
		out[corev1.ResourceCPU] = q
	}
	if pf.Memory != nil {
		q, err := quantity(*pf.Memory)
		if err != nil {
			return nil, fmt.Errorf("profile field memory: %w", err)
		}
		out[corev1.ResourceMemory] = q
	}
	return out, nil
}

// quantity reads a JSON number or string as a resource quantity.
func quantity(raw json.RawMessage) (resource.Quantity, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return resource.ParseQuantity(s)
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return resource.Quantity{}, fmt.Errorf("want a number or a quantity string, got %s", raw)
	}
	if f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return resource.Quantity{}, fmt.Errorf("invalid amount %v", f)
	}
	return resource.ParseQuantity(strconv.FormatFloat(f, 'f', -1, 64))
}

// PodName returns the pod name of a Batsim job id: the DNS-1123 form of
// "workload-id", with a short hash of the id appended when characters had to
// change, so that distinct ids give distinct names.
func PodName(jobID string) string {
	var b strings.Builder
	changed := false
	for _, r := range strings.ToLower(jobID) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		case r == '!':
			b.WriteByte('-')
		default:
			b.WriteByte('-')
			changed = true
		}
	}
	if strings.ToLower(jobID) != jobID {
		changed = true
	}
	name := strings.Trim(b.String(), "-")
	if name == "" {
		name = "job"
		changed = true
	}
	if name != strings.ReplaceAll(strings.ToLower(jobID), "!", "-") {
		changed = true
	}
	const maxLen = validation.DNS1123SubdomainMaxLength - 16 // room for "-<group index>" and a hash
	if len(name) > maxLen {
		name = strings.TrimRight(name[:maxLen], "-")
		changed = true
	}
	if changed {
		sum := sha256.Sum256([]byte(jobID))
		name += "-" + hex.EncodeToString(sum[:4])
	}
	return name
}
