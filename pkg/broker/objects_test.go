package broker

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSplitTimedObjects(t *testing.T) {
	docs := []json.RawMessage{
		json.RawMessage(`{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"high"},"value":10}`),
		json.RawMessage(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","annotations":{"batkube.io/create-at":"5","batkube.io/delete-at":"200"}}}`),
		json.RawMessage(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"now"}}`),
		json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"late","annotations":{"batkube.io/create-at":"1e3"}}}`),
	}
	timed, rest, err := SplitTimedObjects(docs)
	if err != nil {
		t.Fatal(err)
	}
	if len(rest) != 1 || !strings.Contains(string(rest[0]), "PriorityClass") {
		t.Errorf("created before the simulation: %s", rest)
	}
	var got []string
	for _, o := range timed {
		verb := "create"
		if o.Delete {
			verb = "delete"
		}
		got = append(got, verb+" "+o.Name+" @"+strconv.FormatFloat(o.At, 'g', -1, 64))
	}
	want := "create Job//now @0,create Deployment//web @5,delete Deployment//web @200,create ConfigMap//late @1000"
	if strings.Join(got, ",") != want {
		t.Errorf("timed objects: %s\nwant %s", strings.Join(got, ","), want)
	}
	for _, bad := range []string{`"batkube.io/create-at":"-1"`, `"batkube.io/create-at":"soon"`, `"batkube.io/create-at":"10","batkube.io/delete-at":"5"`,
		`"batkube.io/repeat":"0"`, `"batkube.io/repeat":"many"`, `"batkube.io/repeat-every":"1"`, `"batkube.io/repeat":"2","batkube.io/repeat-every":"-1"`} {
		doc := json.RawMessage(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","annotations":{` + bad + `}}}`)
		if _, _, err := SplitTimedObjects([]json.RawMessage{doc}); err == nil {
			t.Errorf("annotations {%s}: no error", bad)
		}
	}
}

// A repeated object is its copies, named NAME-i, each created (and
// deleted) i × repeat-every later, in order of their instants among the
// other objects; the copies carry no repetition annotation.
func TestSplitTimedObjectsRepeated(t *testing.T) {
	docs := []json.RawMessage{
		json.RawMessage(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"small","namespace":"a","annotations":{"batkube.io/create-at":"0.1","batkube.io/repeat":"3","batkube.io/repeat-every":"0.5","batkube.io/delete-at":"10"}}}`),
		json.RawMessage(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"once","namespace":"a","annotations":{"batkube.io/create-at":"0.7"}}}`),
		json.RawMessage(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"burst","namespace":"a","annotations":{"batkube.io/repeat":"2"}}}`),
	}
	timed, _, err := SplitTimedObjects(docs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range timed {
		verb := "create"
		if o.Delete {
			verb = "delete"
		}
		got = append(got, verb+" "+o.Name+" @"+strconv.FormatFloat(o.At, 'g', 6, 64))
		var obj metav1.PartialObjectMetadata
		if err := json.Unmarshal(o.Manifest, &obj); err != nil {
			t.Fatal(err)
		}
		if want := o.Name[strings.LastIndex(o.Name, "/")+1:]; obj.Name != want {
			t.Errorf("%s: manifest named %q", o.Name, obj.Name)
		}
		if _, ok := obj.Annotations[RepeatAnnotation]; ok {
			t.Errorf("%s: the copy keeps %s", o.Name, RepeatAnnotation)
		}
	}
	want := "create Job/a/burst-0 @0,create Job/a/burst-1 @0,create Job/a/small-0 @0.1,create Job/a/small-1 @0.6,create Job/a/once @0.7," +
		"create Job/a/small-2 @1.1,delete Job/a/small-0 @10,delete Job/a/small-1 @10.5,delete Job/a/small-2 @11"
	if strings.Join(got, ",") != want {
		t.Errorf("timed objects:\n%s\nwant\n%s", strings.Join(got, ","), want)
	}
}

// A Job's controller owes pods while it has fewer active than it wants, and
// a count while a finished pod keeps its finalizer.
func TestControlledJobsOwePods(t *testing.T) {
	c := newControlled()
	two, five := int32(2), int32(5)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "batch", Namespace: "default", UID: "j1"},
		Spec: batchv1.JobSpec{Parallelism: &two, Completions: &five}}
	c.jobs[job.UID] = job
	if owed := c.owed(); !strings.Contains(owed, "default/batch (0 of 2 pods)") {
		t.Errorf("no pod yet: %q", owed)
	}
	isController := true
	pod := func(name string, phase string, finalizer bool) *corev1.Pod {
		p := &corev1.Pod{}
		p.Name, p.Namespace = name, "default"
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "Job", Name: "batch", UID: "j1", Controller: &isController}}
		p.Status.Phase = corev1.PodPhase(phase)
		if finalizer {
			p.Finalizers = []string{jobTrackingFinalizer}
		}
		return p
	}
	c.podChanged(podRef{"default", "a"}, pod("a", "Pending", true), false)
	c.podChanged(podRef{"default", "b"}, pod("b", "Running", true), false)
	if owed := c.owed(); owed != "" {
		t.Errorf("two pods active: %q", owed)
	}
	c.podChanged(podRef{"default", "a"}, pod("a", "Succeeded", true), false)
	if owed := c.owed(); !strings.Contains(owed, "1 finished pods to count") {
		t.Errorf("a pod finished, not counted: %q", owed)
	}
	c.podChanged(podRef{"default", "a"}, pod("a", "Succeeded", false), false)
	job.Status.Succeeded = 1
	if owed := c.owed(); !strings.Contains(owed, "(1 of 2 pods)") {
		t.Errorf("counted, not replaced: %q", owed)
	}
	job.Status.Succeeded = 4 // one completion left: one pod wanted
	if owed := c.owed(); owed != "" {
		t.Errorf("one active, one completion left: %q", owed)
	}
}
