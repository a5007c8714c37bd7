package admission

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

func TestWebhookMatches(t *testing.T) {
	rule := func(ops []admissionregistrationv1.OperationType, groups, versions, resources []string, scope admissionregistrationv1.ScopeType) admissionregistrationv1.RuleWithOperations {
		return admissionregistrationv1.RuleWithOperations{Operations: ops, Rule: admissionregistrationv1.Rule{
			APIGroups: groups, APIVersions: versions, Resources: resources, Scope: ptr.To(scope)}}
	}
	create := []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
	all := []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll}
	pods := &Request{Operation: admissionv1.Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"},
		Namespaced: true, Object: []byte(`{}`), ObjectLabels: map[string]string{"app": "web"}, NamespaceLabels: map[string]string{"team": "a"}}
	status := *pods
	status.Operation, status.SubResource = admissionv1.Update, "status"
	update := *pods
	update.Operation = admissionv1.Update
	node := &Request{Operation: admissionv1.Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, Object: []byte(`{}`)}
	for _, tc := range []struct {
		name  string
		rule  admissionregistrationv1.RuleWithOperations
		ns    *metav1.LabelSelector
		obj   *metav1.LabelSelector
		exact bool
		req   *Request
		want  bool
	}{
		{name: "pods on create", rule: rule(create, []string{""}, []string{"v1"}, []string{"pods"}, "*"), req: pods, want: true},
		{name: "not on update", rule: rule(create, []string{""}, []string{"v1"}, []string{"pods"}, "*"), req: &update, want: false},
		{name: "every operation", rule: rule(all, []string{""}, []string{"v1"}, []string{"pods"}, "*"), req: &update, want: true},
		{name: "main resource only", rule: rule(all, []string{""}, []string{"v1"}, []string{"pods"}, "*"), req: &status, want: false},
		{name: "subresource named", rule: rule(all, []string{""}, []string{"v1"}, []string{"pods/status"}, "*"), req: &status, want: true},
		{name: "every subresource", rule: rule(all, []string{"*"}, []string{"*"}, []string{"*/*"}, "*"), req: &status, want: true},
		{name: "namespaced scope, cluster object", rule: rule(all, []string{""}, []string{"v1"}, []string{"*"}, admissionregistrationv1.NamespacedScope), req: node, want: false},
		{name: "cluster scope", rule: rule(all, []string{""}, []string{"v1"}, []string{"*"}, admissionregistrationv1.ClusterScope), req: node, want: true},
		{name: "another version, Equivalent", rule: rule(all, []string{""}, []string{"v2"}, []string{"pods"}, "*"), req: pods, want: true},
		{name: "another version, Exact", rule: rule(all, []string{""}, []string{"v2"}, []string{"pods"}, "*"), exact: true, req: pods, want: false},
		{name: "namespace selector", rule: rule(all, []string{""}, []string{"v1"}, []string{"pods"}, "*"),
			ns: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}, req: pods, want: true},
		{name: "namespace selector, no match", rule: rule(all, []string{""}, []string{"v1"}, []string{"pods"}, "*"),
			ns: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}}, req: pods, want: false},
		{name: "object selector", rule: rule(all, []string{""}, []string{"v1"}, []string{"pods"}, "*"),
			obj: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, req: pods, want: true},
		{name: "object selector, no match", rule: rule(all, []string{""}, []string{"v1"}, []string{"pods"}, "*"),
			obj: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, req: pods, want: false},
	} {
		mp := admissionregistrationv1.Equivalent
		if tc.exact {
			mp = admissionregistrationv1.Exact
		}
		w, err := Compile(nil, []*admissionregistrationv1.ValidatingWebhookConfiguration{{ObjectMeta: metav1.ObjectMeta{Name: "c"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "w", Rules: []admissionregistrationv1.RuleWithOperations{tc.rule},
				NamespaceSelector: tc.ns, ObjectSelector: tc.obj, MatchPolicy: &mp,
				ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/")}}}}}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := w.validating[0].matches(tc.req); got != tc.want {
			t.Errorf("%s: matches = %v, want %v", tc.name, got, tc.want)
		}
		// Intercepts reads the rules only: selectors are left to matches.
		ruleOnly := tc.want || tc.ns != nil || tc.obj != nil
		if got := w.Intercepts(false, tc.req); got != ruleOnly {
			t.Errorf("%s: Intercepts = %v, want %v", tc.name, got, ruleOnly)
		}
		if w.Intercepts(true, tc.req) {
			t.Errorf("%s: a validating webhook intercepts as a mutating one", tc.name)
		}
	}
}

// A webhook that cannot be compiled is left out and said; the others stay.
func TestCompileLeavesOutBrokenWebhooks(t *testing.T) {
	good := admissionregistrationv1.ValidatingWebhook{Name: "good", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/")}}
	bad := good
	bad.Name = "bad"
	bad.ObjectSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Sometimes"}}}
	w, err := Compile(nil, []*admissionregistrationv1.ValidatingWebhookConfiguration{{ObjectMeta: metav1.ObjectMeta{Name: "c"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{bad, good}}}, nil, nil)
	if err == nil || len(w.validating) != 1 || w.validating[0].name != "good" {
		t.Errorf("compiled %d webhooks, err %v; want only good, and an error naming bad", len(w.validating), err)
	}
}

func TestEmptyWebhooksCallNothing(t *testing.T) {
	var w *Webhooks
	if !w.Empty() {
		t.Fatal("nil Webhooks not empty")
	}
	obj := []byte(`{"a":1}`)
	if out, err := w.Mutate(t.Context(), &Request{Object: obj}); err != nil || string(out) != string(obj) {
		t.Fatalf("Mutate without webhooks: %s, %v", out, err)
	}
	if err := w.Validate(t.Context(), &Request{}); err != nil {
		t.Fatal(err)
	}
}

// A review carries the object and the old object as the server encoded
// them, and decodes to the review encoding/json writes.
func TestReviewBodyCarriesTheObjects(t *testing.T) {
	// Each holds the other's placeholder as text.
	object := []byte(`{"kind":"Workload","metadata":{"name":"w"},"status":{"message":"a\u003cb"},"note":"batkube:oldObject:1"}` + "\n")
	old := []byte(`{"kind":"Workload","metadata":{"name":"w"},"note":"batkube:object:1"}`)
	for _, c := range []struct{ object, old []byte }{{object, old}, {object, nil}, {nil, old}, {nil, nil}} {
		review := admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request: &admissionv1.AdmissionRequest{UID: "1", Name: "w", Namespace: "default", Operation: admissionv1.Update}}
		want := review
		want.Request = review.Request.DeepCopy()
		want.Request.Object.Raw, want.Request.OldObject.Raw = c.object, c.old
		wantBody, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		body, err := reviewBody(&review, c.object, c.old)
		if err != nil {
			t.Fatal(err)
		}
		var got, expected any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if err := json.Unmarshal(wantBody, &expected); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, expected) {
			t.Errorf("the review:\n%s\nencoding/json's:\n%s", body, wantBody)
		}
	}
}

// BenchmarkReviewBody: a review of an update of a 12 KB object, spliced
// and as encoding/json writes it.
func BenchmarkReviewBody(b *testing.B) {
	var fields []string
	for i := range 200 {
		fields = append(fields, fmt.Sprintf(`"field%d":{"name":"value %d","count":%d}`, i, i, i))
	}
	object := []byte("{" + strings.Join(fields, ",") + "}\n")
	review := func() *admissionv1.AdmissionReview {
		return &admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request: &admissionv1.AdmissionRequest{UID: "1", Name: "w", Namespace: "default", Operation: admissionv1.Update}}
	}
	b.Run("spliced", func(b *testing.B) {
		for b.Loop() {
			if _, err := reviewBody(review(), object, object); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			r := review()
			r.Request.Object.Raw, r.Request.OldObject.Raw = object, object
			if _, err := json.Marshal(r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
