package translate

import (
	"encoding/json"
	"testing"
)

func TestGangJobPodsReferenceTheirPodGroup(t *testing.T) {
	job := Job{ID: "w0!5", Res: 3,
		Fields:  map[string]json.RawMessage{"pod_template": raw(`{"spec":{"schedulingGroup":{"podGroupName":"other"}}}`)},
		Profile: map[string]json.RawMessage{"type": raw(`"delay"`), "cpu": raw(`8`)}}
	opts := PodOptions{Namespace: "batch", Gangs: GangsPodGroup}
	g, err := PodGroup(job, opts)
	if err != nil {
		t.Fatal(err)
	}
	if g == nil {
		t.Fatal("PodGroup: got nil for a res=3 job with gangs on")
	}
	if g.Name != "w0-5" || g.Namespace != "batch" || g.Kind != "PodGroup" || g.APIVersion != "scheduling.k8s.io/v1beta1" ||
		g.Labels[JobLabel] != "w0-5" || g.Annotations[JobIDKey] != "w0!5" {
		t.Errorf("PodGroup: got %s %s/%s labels %v annotations %v", g.APIVersion+"/"+g.Kind, g.Namespace, g.Name, g.Labels, g.Annotations)
	}
	if p := g.Spec.SchedulingPolicy; p.Gang == nil || p.Gang.MinCount != 3 || p.Basic != nil {
		t.Errorf("scheduling policy: got %+v, want gang with minCount 3", p)
	}
	pods, err := Pods(job, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 3 {
		t.Fatalf("got %d pods, want 3", len(pods))
	}
	for _, p := range pods {
		sg := p.Spec.SchedulingGroup
		if sg == nil || sg.PodGroupName == nil || *sg.PodGroupName != g.Name || p.Namespace != g.Namespace {
			t.Errorf("pod %s/%s: schedulingGroup %v, want podGroupName %s in %s", p.Namespace, p.Name, sg, g.Name, g.Namespace)
		}
	}
	// Each pod holds its own copy: changing one leaves the others alone.
	*pods[0].Spec.SchedulingGroup.PodGroupName = "changed"
	if *pods[1].Spec.SchedulingGroup.PodGroupName != g.Name {
		t.Error("the pods of a job share one schedulingGroup")
	}
}

func TestNoPodGroupWithoutGangs(t *testing.T) {
	for name, c := range map[string]struct {
		res   int
		gangs Gangs
	}{
		"gangs off, res 3":     {3, GangsOff},
		"gangs unset, res 3":   {3, ""},
		"gangs on, res 1":      {1, GangsPodGroup},
		"gangs on, res 0 (=1)": {0, GangsPodGroup},
	} {
		job := Job{ID: "w!1", Res: c.res, Profile: map[string]json.RawMessage{"type": raw(`"delay"`)}}
		opts := PodOptions{Gangs: c.gangs}
		if g, err := PodGroup(job, opts); err != nil || g != nil {
			t.Errorf("%s: got PodGroup %v, %v; want none", name, g, err)
		}
		pods, err := Pods(job, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, p := range pods {
			if p.Spec.SchedulingGroup != nil {
				t.Errorf("%s: pod %s has schedulingGroup %v, want none", name, p.Name, p.Spec.SchedulingGroup)
			}
		}
	}
}

func TestParseGangs(t *testing.T) {
	for in, want := range map[string]Gangs{"": GangsOff, "off": GangsOff, "podgroup": GangsPodGroup} {
		if got, err := ParseGangs(in); err != nil || got != want {
			t.Errorf("ParseGangs(%q): got %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseGangs("workload"); err == nil {
		t.Error(`ParseGangs("workload"): got no error`)
	}
}

func TestPodGroupCarriesThePodsPriority(t *testing.T) {
	job := Job{ID: "w!2", Res: 2,
		Profile: map[string]json.RawMessage{"type": raw(`"delay"`), "pod_template": raw(`{"spec":{"priorityClassName":"urgent","priority":7}}`)}}
	g, err := PodGroup(job, PodOptions{Gangs: GangsPodGroup})
	if err != nil {
		t.Fatal(err)
	}
	if g.Spec.PriorityClassName != "urgent" || g.Spec.Priority == nil || *g.Spec.Priority != 7 {
		t.Errorf("PodGroup spec: priorityClassName %q priority %v, want the pod_template's urgent and 7", g.Spec.PriorityClassName, g.Spec.Priority)
	}
	bad := Job{ID: "w!3", Res: 2, Profile: map[string]json.RawMessage{"type": raw(`"delay"`), "pod_template": raw(`{"spec":3}`)}}
	if _, err := PodGroup(bad, PodOptions{Gangs: GangsPodGroup}); err == nil {
		t.Error("PodGroup of a job whose pod_template is not a pod: got no error")
	}
}

// TestProfilesAreParsedOncePerKey: with a profile cache, jobs naming the
// same profile key share its parsed form, and each gets its own copy of
// the profile's pod_template.
func TestProfilesAreParsedOncePerKey(t *testing.T) {
	cache := NewProfiles()
	opts := PodOptions{Profiles: cache}
	prof := map[string]json.RawMessage{"type": raw(`"delay"`), "cpu": raw(`2`),
		"pod_template": raw(`{"metadata":{"labels":{"team":"a"}}}`)}
	first, err := Pods(Job{ID: "w!1", Res: 1, Profile: prof, ProfileKey: "w/p"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	first[0].Labels["team"] = "changed" // must not reach the cached template
	// Same key: the cached profile is used, whatever the map says now.
	other := map[string]json.RawMessage{"type": raw(`"delay"`), "cpu": raw(`9`)}
	second, err := Pods(Job{ID: "w!2", Res: 1, Profile: other, ProfileKey: "w/p"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if cpu := second[0].Spec.Containers[0].Resources.Requests.Cpu().String(); cpu != "2" || second[0].Labels["team"] != "a" {
		t.Errorf("second job of key w/p: cpu %s, label team %q; want the cached profile's 2 and a", cpu, second[0].Labels["team"])
	}
	// Without a key, the job's own profile.
	third, err := Pods(Job{ID: "w!3", Res: 1, Profile: other}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if cpu := third[0].Spec.Containers[0].Resources.Requests.Cpu().String(); cpu != "9" {
		t.Errorf("job without a profile key: cpu %s, want its own 9", cpu)
	}
}
