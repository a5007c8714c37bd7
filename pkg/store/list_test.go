package store

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// seedPods creates, in a scrambled order, pods b, a (app=web, node n1) and c
// (app=db) in ns1, and a (app=web, node n2) in ns2, plus a node.
func seedPods(t *testing.T, s *Store) {
	t.Helper()
	mustCreate(t, s, pods, newPod("ns2", "a", map[string]string{"app": "web"}, "n2"))
	mustCreate(t, s, pods, newPod("ns1", "c", map[string]string{"app": "db"}, ""))
	mustCreate(t, s, nodes, newPod("", "n1", nil, ""))
	mustCreate(t, s, pods, newPod("ns1", "b", nil, ""))
	mustCreate(t, s, pods, newPod("ns1", "a", map[string]string{"app": "web"}, "n1"))
}

func TestListFiltersAndOrdersByNamespaceThenName(t *testing.T) {
	s := newTestStore(t, 0)
	seedPods(t, s)
	tests := []struct {
		name string
		opts ListOptions
		want []string
	}{
		{"all namespaces", ListOptions{}, []string{"ns1/a", "ns1/b", "ns1/c", "ns2/a"}},
		{"one namespace", ListOptions{Selection: Selection{Namespace: "ns1"}}, []string{"ns1/a", "ns1/b", "ns1/c"}},
		{"missing namespace", ListOptions{Selection: Selection{Namespace: "none"}}, []string{}},
		{"label equals", ListOptions{Selection: Selection{Label: labels.SelectorFromSet(labels.Set{"app": "web"})}}, []string{"ns1/a", "ns2/a"}},
		{"label not equal", ListOptions{Selection: selection(t, "app!=web", "")}, []string{"ns1/b", "ns1/c"}},
		{"label exists", ListOptions{Selection: selection(t, "app", "")}, []string{"ns1/a", "ns1/c", "ns2/a"}},
		{"field ==", ListOptions{Selection: selection(t, "", "spec.nodeName==n1")}, []string{"ns1/a"}},
		{"field != list", ListOptions{Selection: selection(t, "", "spec.nodeName!=n1,spec.nodeName!=n2")}, []string{"ns1/b", "ns1/c"}},
		{"metadata field", ListOptions{Selection: selection(t, "", "metadata.name=a")}, []string{"ns1/a", "ns2/a"}},
		{"label and field", ListOptions{Selection: selection(t, "app=web", "metadata.namespace=ns2")}, []string{"ns2/a"}},
		{"empty selectors", ListOptions{Selection: Selection{Label: labels.Everything(), Field: fields.Everything()}}, []string{"ns1/a", "ns1/b", "ns1/c", "ns2/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustList(t, s, pods, tt.opts)
			if got := itemNames(res.Items); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if res.RV != 5 || res.Continue != "" || res.RemainingItemCount != nil {
				t.Errorf("got RV %d continue %q remaining %v, want RV 5 and one page", res.RV, res.Continue, res.RemainingItemCount)
			}
		})
	}
}

func TestPagedListIsOneSnapshot(t *testing.T) {
	s := newTestStore(t, 0)
	createPods(t, s, "a", "b", "c", "d", "e")
	first := mustList(t, s, pods, ListOptions{Limit: 2})
	// Writes between pages: a deleted page-1 item, a new item on a later
	// page, a modified and a deleted later item.
	mustDelete(t, s, pods, "ns", "a")
	mustCreate(t, s, pods, newPod("ns", "cc", nil, ""))
	mustUpdate(t, s, pods, "ns", "d", func(p *corev1.Pod) { p.Spec.NodeName = "changed" })
	mustDelete(t, s, pods, "ns", "e")

	got := itemNames(first.Items)
	rv, cont := first.RV, first.Continue
	for cont != "" {
		page := mustList(t, s, pods, ListOptions{Limit: 2, Continue: cont})
		if page.RV != rv {
			t.Errorf("got page RV %d, want the first page's %d", page.RV, rv)
		}
		for _, st := range page.Items {
			if st.Object().(*corev1.Pod).Spec.NodeName != "" || st.RV() > rv {
				t.Errorf("page shows %s at RV %d, a write after the snapshot", st.Object().GetName(), st.RV())
			}
		}
		got = append(got, itemNames(page.Items)...)
		cont = page.Continue
	}
	if want := []string{"ns/a", "ns/b", "ns/c", "ns/d", "ns/e"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want the snapshot %v", got, want)
	}
}

func TestRemainingItemCountOnlyWithoutSelectors(t *testing.T) {
	s := newTestStore(t, 0)
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		mustCreate(t, s, pods, newPod("ns", name, map[string]string{"app": "x"}, ""))
	}
	tests := []struct {
		name          string
		opts          ListOptions
		wantRemaining *int64
		wantContinue  bool
	}{
		{"no selector", ListOptions{Limit: 2}, ptr(int64(3)), true},
		{"label selector", ListOptions{Selection: selection(t, "app=x", ""), Limit: 2}, nil, true},
		{"field selector", ListOptions{Selection: selection(t, "", "metadata.namespace=ns"), Limit: 2}, nil, true},
		{"last page", ListOptions{Limit: 5}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustList(t, s, pods, tt.opts)
			if (res.Continue != "") != tt.wantContinue {
				t.Errorf("got continue %q, want one: %v", res.Continue, tt.wantContinue)
			}
			switch {
			case tt.wantRemaining == nil && res.RemainingItemCount != nil:
				t.Errorf("got remainingItemCount %d, want none", *res.RemainingItemCount)
			case tt.wantRemaining != nil && (res.RemainingItemCount == nil || *res.RemainingItemCount != *tt.wantRemaining):
				t.Errorf("got remainingItemCount %v, want %d", res.RemainingItemCount, *tt.wantRemaining)
			}
		})
	}
}

func TestContinueTokenTooOld(t *testing.T) {
	const history = 10
	s := newTestStore(t, history)
	createPods(t, s, "a", "b", "c", "d")
	first := mustList(t, s, pods, ListOptions{Limit: 2})
	for range history + 1 {
		mustUpdate(t, s, pods, "ns", "a", func(p *corev1.Pod) { p.Spec.NodeName += "x" })
	}
	_, err := s.List(pods, ListOptions{Limit: 2, Continue: first.Continue})
	if !apierrors.IsResourceExpired(err) {
		t.Fatalf("got %v, want 410 Expired", err)
	}
	if !strings.HasPrefix(err.Error(), "The provided continue parameter is too old to display a consistent list result.") {
		t.Errorf("got message %q, want the apiserver's", err.Error())
	}
	// The error carries a token that continues, inconsistently, at the current state.
	var status *apierrors.StatusError
	if !asStatus(err, &status) || status.ErrStatus.ListMeta.Continue == "" {
		t.Fatalf("got %#v, want a Status with a continue token", err)
	}
	rest := mustList(t, s, pods, ListOptions{Limit: 2, Continue: status.ErrStatus.ListMeta.Continue})
	if got, want := itemNames(rest.Items), []string{"ns/c", "ns/d"}; !slices.Equal(got, want) || rest.RV != s.CurrentRV() {
		t.Errorf("got %v at RV %d, want %v at the current RV %d", got, rest.RV, want, s.CurrentRV())
	}
}

func TestBadContinueTokenIsBadRequest(t *testing.T) {
	s := newTestStore(t, 0)
	mustCreate(t, s, pods, newPod("ns", "a", nil, ""))
	future, err := encodeContinue(continueToken{rv: 99, after: key{"ns", "a"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{"%%%", "bm90IGpzb24", encodeRaw(`{"v":"other","rv":1,"start":"ns/a"}`),
		encodeRaw(`{"v":"meta.k8s.io/v1","rv":0,"start":"ns/a"}`), encodeRaw(`{"v":"meta.k8s.io/v1","rv":1,"start":"a"}`), future} {
		t.Run(tok, func(t *testing.T) {
			if _, err := s.List(pods, ListOptions{Continue: tok}); !apierrors.IsBadRequest(err) {
				t.Errorf("got %v, want BadRequest", err)
			}
		})
	}
}

func TestListExactRVShowsThePast(t *testing.T) {
	s := newTestStore(t, 0)
	mustCreate(t, s, pods, newPod("ns", "a", nil, ""))      // 1
	mustCreate(t, s, pods, newPod("ns", "b", nil, ""))      // 2
	mustCreate(t, s, pods, newPod("ns", "c", nil, ""))      // 3
	mustUpdate(t, s, pods, "ns", "b", func(p *corev1.Pod) { // 4
		p.Spec.NodeName = "n1"
	})
	mustDelete(t, s, pods, "ns", "a")                  // 5
	mustCreate(t, s, pods, newPod("ns", "d", nil, "")) // 6
	mustDelete(t, s, pods, "ns", "c")                  // 7
	mustCreate(t, s, pods, newPod("ns", "c", nil, "")) // 8
	tests := []struct {
		rv   uint64
		want []string
	}{
		{0, []string{}},
		{2, []string{"a@1", "b@2"}},
		{3, []string{"a@1", "b@2", "c@3"}},
		{4, []string{"a@1", "b@4", "c@3"}},
		{5, []string{"b@4", "c@3"}},
		{7, []string{"b@4", "d@6"}},
		{8, []string{"b@4", "c@8", "d@6"}},
	}
	for _, tt := range tests {
		t.Run(strconvU(tt.rv), func(t *testing.T) {
			res := mustList(t, s, pods, ListOptions{ResourceVersion: tt.rv, Exact: true})
			got := []string{}
			for _, st := range res.Items {
				got = append(got, st.Object().GetName()+"@"+strconvU(st.RV()))
			}
			if !slices.Equal(got, tt.want) || res.RV != tt.rv {
				t.Errorf("got %v at RV %d, want %v at %d", got, res.RV, tt.want, tt.rv)
			}
		})
	}
	t.Run("paged at RV 4", func(t *testing.T) {
		var got []string
		opts := ListOptions{ResourceVersion: 4, Exact: true, Limit: 1}
		for {
			res := mustList(t, s, pods, opts)
			got = append(got, itemNames(res.Items)...)
			if res.Continue == "" {
				break
			}
			opts = ListOptions{Limit: 1, Continue: res.Continue}
		}
		if want := []string{"ns/a", "ns/b", "ns/c"}; !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
}

func TestListRVBounds(t *testing.T) {
	s := newTestStore(t, 3)
	createPods(t, s, "a", "b", "c", "d", "e")
	tests := []struct {
		name  string
		opts  ListOptions
		check func(error) bool
	}{
		{"exact older than the history", ListOptions{ResourceVersion: 1, Exact: true}, apierrors.IsResourceExpired},
		{"exact oldest kept", ListOptions{ResourceVersion: 2, Exact: true}, func(err error) bool { return err == nil }},
		{"exact in the future", ListOptions{ResourceVersion: 6, Exact: true}, apierrors.IsTimeout},
		{"not older than the future", ListOptions{ResourceVersion: 6}, apierrors.IsTimeout},
		{"not older than the past", ListOptions{ResourceVersion: 1}, func(err error) bool { return err == nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.List(pods, tt.opts); !tt.check(err) {
				t.Errorf("got %v, want another outcome", err)
			}
		})
	}
}

// TestWritesToAnotherResourceDoNotExpireAContinueToken: a burst of Events, 50
// times the history, leaves the pods' history alone, so a paged pod list
// goes on at its first page's snapshot.
func TestWritesToAnotherResourceDoNotExpireAContinueToken(t *testing.T) {
	const history, burst = 1000, 50_000
	s := newTestStore(t, history)
	createPods(t, s, "a", "b", "c", "d")
	first := mustList(t, s, pods, ListOptions{Limit: 2})
	mustDelete(t, s, pods, "ns", "c") // after the snapshot: the next page still shows c
	writeEvents(t, s, burst)
	rest, err := s.List(pods, ListOptions{Limit: 2, Continue: first.Continue})
	if err != nil {
		t.Fatalf("continuing after the burst: %v", err)
	}
	if got, want := itemNames(rest.Items), []string{"ns/c", "ns/d"}; !slices.Equal(got, want) || rest.RV != first.RV {
		t.Errorf("got %v at RV %d, want %v at the first page's RV %d", got, rest.RV, want, first.RV)
	}
}

// TestWritesToAnotherResourceDoNotExpireAnExactRVList: the same for a list
// at an exact past RV.
func TestWritesToAnotherResourceDoNotExpireAnExactRVList(t *testing.T) {
	const history, burst = 1000, 50_000
	s := newTestStore(t, history)
	mustCreate(t, s, pods, newPod("ns", "a", nil, "")) // 1
	mustCreate(t, s, pods, newPod("ns", "b", nil, "")) // 2
	mustUpdate(t, s, pods, "ns", "a", func(p *corev1.Pod) { p.Spec.NodeName = "n1" })
	mustDelete(t, s, pods, "ns", "b")
	writeEvents(t, s, burst)
	mustCreate(t, s, pods, newPod("ns", "c", nil, ""))
	res, err := s.List(pods, ListOptions{ResourceVersion: 2, Exact: true})
	if err != nil {
		t.Fatalf("listing at RV 2 after the burst: %v", err)
	}
	var got []string
	for _, st := range res.Items {
		got = append(got, st.Object().GetName()+"@"+strconvU(st.RV()))
	}
	if want := []string{"a@1", "b@2"}; !slices.Equal(got, want) || res.RV != 2 {
		t.Errorf("got %v at RV %d, want %v at 2", got, res.RV, want)
	}
	if _, err := s.List(events, ListOptions{ResourceVersion: 2, Exact: true}); !apierrors.IsResourceExpired(err) {
		t.Errorf("listing events at RV 2: got %v, want 410 Expired: the burst passed their own history", err)
	}
}
