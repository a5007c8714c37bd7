package server_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/batkube/batkube/pkg/apiserver"
	"github.com/batkube/batkube/pkg/server"
	"github.com/batkube/batkube/pkg/server/servertest"
	"github.com/batkube/batkube/pkg/store"
)

var (
	reader = authenticationv1.UserInfo{Username: "reader", UID: "reader-uid", Groups: []string{"readers"}}
	admin  = authenticationv1.UserInfo{Username: "root", Groups: []string{apiserver.SystemMasters}}
)

// reviewServer serves two known tokens and allows the administrators only.
func reviewServer(t *testing.T, opts server.Options) *servertest.Server {
	opts.Authenticator = apiserver.StaticTokens{"reader-token": reader, "admin-token": admin}
	if opts.Authorizer == nil {
		opts.Authorizer = apiserver.AllowGroups{apiserver.SystemMasters}
	}
	return servertest.Start(t, opts)
}

// clientsWithToken returns a JSON and a protobuf clientset that send token
// (none if empty).
func clientsWithToken(t *testing.T, ts *servertest.Server, token string) map[string]kubernetes.Interface {
	t.Helper()
	out := map[string]kubernetes.Interface{}
	for name, cfg := range map[string]*rest.Config{"json": ts.Config(), "protobuf": ts.ProtobufConfig()} {
		cfg.BearerToken = token
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatalf("client %s: %v", name, err)
		}
		out[name] = cs
	}
	return out
}

// assertNothingStored checks the store did not change since rv and holds no review.
func assertNothingStored(t *testing.T, ts *servertest.Server, rv uint64) {
	t.Helper()
	if now := ts.Store.CurrentRV(); now != rv {
		t.Errorf("the store went from revision %d to %d", rv, now)
	}
	for _, gr := range []schema.GroupResource{
		{Group: "authentication.k8s.io", Resource: "tokenreviews"},
		{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"},
		{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"},
		{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"},
		{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"},
		{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"},
	} {
		if res, err := ts.Store.List(gr, store.ListOptions{}); err == nil && len(res.Items) > 0 {
			t.Errorf("%d %s stored", len(res.Items), gr)
		}
	}
}

func TestTokenReviewAuthenticatesKnownTokensOnly(t *testing.T) {
	ts := reviewServer(t, server.Options{})
	rv := ts.Store.CurrentRV()
	eachClient(t, ts, func(t *testing.T, ctx context.Context, name string, cs kubernetes.Interface) {
		reviews := cs.AuthenticationV1().TokenReviews()
		got, err := reviews.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: "reader-token", Audiences: []string{"metrics"}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("known token: %v", err)
		}
		st := got.Status
		if !st.Authenticated || st.Error != "" || st.User.Username != "reader" || st.User.UID != "reader-uid" ||
			!slices.Equal(st.User.Groups, []string{"readers", "system:authenticated"}) || !slices.Equal(st.Audiences, []string{"metrics"}) {
			t.Errorf("known token: got status %+v", st)
		}
		if got.Spec.Token != "reader-token" || got.ResourceVersion != "" || got.UID != "" {
			t.Errorf("known token: the answer is not the review echoed: %+v", got)
		}

		got, err = reviews.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: "nobody's"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("unknown token: %v", err)
		}
		if st := got.Status; st.Authenticated || st.Error != "invalid bearer token" || st.User.Username != "" || len(st.Audiences) > 0 {
			t.Errorf("unknown token: got status %+v", st)
		}

		_, err = reviews.Create(ctx, &authenticationv1.TokenReview{}, metav1.CreateOptions{})
		if !apierrors.IsBadRequest(err) {
			t.Errorf("no token: got %v, want 400 Bad Request", err)
		}
	})
	assertNothingStored(t, ts, rv)
}

func TestTokenReviewKnowsTheBearerToken(t *testing.T) {
	ts := servertest.Start(t, server.Options{BearerToken: "s3cret"})
	cfg := ts.Config()
	cfg.BearerToken = "s3cret"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cs.AuthenticationV1().TokenReviews().Create(ctxT(t), &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: "s3cret"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st := got.Status; !st.Authenticated || !slices.Contains(st.User.Groups, apiserver.SystemMasters) {
		t.Errorf("the bearer token is not an administrator's: %+v", st)
	}
}

func TestSubjectAccessReviewFollowsThePolicy(t *testing.T) {
	ts := reviewServer(t, server.Options{})
	rv := ts.Store.CurrentRV()
	metrics := &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}
	eachClient(t, ts, func(t *testing.T, ctx context.Context, name string, cs kubernetes.Interface) {
		sars := cs.AuthorizationV1().SubjectAccessReviews()
		got, err := sars.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: "root", Groups: []string{apiserver.SystemMasters, "system:authenticated"}, NonResourceAttributes: metrics}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("administrator: %v", err)
		}
		if !got.Status.Allowed || got.Status.Denied || got.Spec.User != "root" || got.ResourceVersion != "" {
			t.Errorf("administrator: got %+v", got)
		}

		got, err = sars.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: "reader", Groups: []string{"readers"}, NonResourceAttributes: metrics}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("reader: %v", err)
		}
		if got.Status.Allowed || got.Status.Denied || got.Status.Reason == "" {
			t.Errorf("reader: got status %+v, want not allowed (no opinion) with a reason", got.Status)
		}

		local, err := cs.AuthorizationV1().LocalSubjectAccessReviews("default").Create(ctx, &authorizationv1.LocalSubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: "root", Groups: []string{apiserver.SystemMasters}, ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "default", Verb: "list", Resource: "pods"}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("local review: %v", err)
		}
		if !local.Status.Allowed || local.Namespace != "default" {
			t.Errorf("local review: got %+v", local)
		}

		for _, bad := range []struct {
			name string
			sar  authorizationv1.SubjectAccessReview
		}{
			{"no attributes", authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "root"}}},
			{"both attributes", authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "root", NonResourceAttributes: metrics, ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get"}}}},
			{"no subject", authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{NonResourceAttributes: metrics}}},
			{"a name", authorizationv1.SubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: authorizationv1.SubjectAccessReviewSpec{User: "root", NonResourceAttributes: metrics}}},
		} {
			if _, err := sars.Create(ctx, &bad.sar, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
				t.Errorf("%s: got %v, want 422 Invalid", bad.name, err)
			}
		}
		_, err = cs.AuthorizationV1().LocalSubjectAccessReviews("default").Create(ctx, &authorizationv1.LocalSubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: "root", ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "other", Verb: "list", Resource: "pods"}}}, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Errorf("local review of another namespace: got %v, want 422 Invalid", err)
		}
	})
	assertNothingStored(t, ts, rv)
}

func TestWithoutAuthorizerEverythingIsAllowed(t *testing.T) {
	ts := servertest.StartDefault(t)
	cs := clients(t, ts)["protobuf"]
	got, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctxT(t), &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: "anyone", ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "delete", Resource: "nodes"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Status.Allowed {
		t.Errorf("got %+v, want allowed", got.Status)
	}
}

func TestSelfReviewsIdentifyTheSender(t *testing.T) {
	ts := reviewServer(t, server.Options{})
	rv := ts.Store.CurrentRV()
	pods := &authorizationv1.ResourceAttributes{Namespace: "default", Verb: "create", Resource: "pods"}
	for _, tt := range []struct {
		token, user string
		groups      []string
		allowed     bool
	}{
		{"admin-token", "root", []string{apiserver.SystemMasters, "system:authenticated"}, true},
		{"reader-token", "reader", []string{"readers", "system:authenticated"}, false},
		{"", "system:anonymous", []string{"system:unauthenticated"}, false},
	} {
		for name, cs := range clientsWithToken(t, ts, tt.token) {
			t.Run(tt.user+"/"+name, func(t *testing.T) {
				ctx := ctxT(t)
				who, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
				if err != nil {
					t.Fatalf("self subject review: %v", err)
				}
				if u := who.Status.UserInfo; u.Username != tt.user || !slices.Equal(u.Groups, tt.groups) {
					t.Errorf("self subject review: got %+v, want %s in %v", u, tt.user, tt.groups)
				}
				can, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
					Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: pods}}, metav1.CreateOptions{})
				if err != nil {
					t.Fatalf("self subject access review: %v", err)
				}
				if can.Status.Allowed != tt.allowed {
					t.Errorf("self subject access review: got %+v, want allowed=%v", can.Status, tt.allowed)
				}
				rules, err := cs.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{
					Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "default"}}, metav1.CreateOptions{})
				if err != nil {
					t.Fatalf("self subject rules review: %v", err)
				}
				if everything := len(rules.Status.ResourceRules) == 1 && !rules.Status.Incomplete; everything != tt.allowed {
					t.Errorf("self subject rules review: got %+v", rules.Status)
				}
			})
		}
	}
	for name, cs := range clientsWithToken(t, ts, "unknown-token") {
		_, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctxT(t), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if !apierrors.IsUnauthorized(err) {
			t.Errorf("%s: an unknown token got %v, want 401 Unauthorized", name, err)
		}
	}
	assertNothingStored(t, ts, rv)
}

// TestReviewsAreCreateOnly checks the raw answers: 201 with the review in
// the negotiated encoding, and no other verb.
func TestReviewsAreCreateOnly(t *testing.T) {
	ts := reviewServer(t, server.Options{})
	const reviews = "/apis/authentication.k8s.io/v1/tokenreviews"
	const body = `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"reader-token"}}`
	for _, accept := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
		a := send(ctxT(t), t, ts.URL, http.MethodPost, reviews, "application/json", accept, []byte(body))
		if a.code != http.StatusCreated || a.contentType != accept {
			t.Fatalf("Accept %s: got %d %s: %s", accept, a.code, a.contentType, a.body)
		}
		obj, gvk, err := clientscheme.Codecs.UniversalDeserializer().Decode(a.body, nil, nil)
		if err != nil {
			t.Fatalf("Accept %s: decoding the answer: %v", accept, err)
		}
		tr, ok := obj.(*authenticationv1.TokenReview)
		if !ok || *gvk != authenticationv1.SchemeGroupVersion.WithKind("TokenReview") || !tr.Status.Authenticated {
			t.Errorf("Accept %s: got %s %+v", accept, gvk, obj)
		}
		if accept == "application/json" && (!strings.Contains(string(a.body), `"apiVersion":"authentication.k8s.io/v1"`) || strings.Contains(string(a.body), "resourceVersion")) {
			t.Errorf("JSON answer: %s", a.body)
		}
	}
	for _, tt := range []struct{ method, path string }{
		{"GET", reviews},
		{"GET", reviews + "?watch=true"},
		{"GET", reviews + "/x"},
		{"DELETE", reviews + "/x"},
		{"PUT", reviews + "/x"},
		{"GET", "/apis/authorization.k8s.io/v1/subjectaccessreviews"},
		{"GET", "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews"},
	} {
		code, st := do(t, ts, tt.method, tt.path, "", "")
		if (code != http.StatusNotFound && code != http.StatusMethodNotAllowed) || st.Kind != "Status" {
			t.Errorf("%s %s: got %d %+v, want 404 or 405", tt.method, tt.path, code, st)
		}
	}
}
