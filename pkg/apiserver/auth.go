package apiserver

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Authenticator maps a bearer token to a user: it answers TokenReviews (how
// kube-scheduler and other components that delegate authentication to the
// API server check their own clients) and identifies the senders of
// self-reviews. It must be safe for concurrent use.
type Authenticator interface {
	// AuthenticateToken returns the user a token stands for; ok is false
	// for a token it does not know.
	AuthenticateToken(token string) (user authenticationv1.UserInfo, ok bool)
}

// Authorizer decides access reviews (SubjectAccessReview and its self and
// local forms): whether a user may do what a review's spec describes. Batkube
// has no RBAC: it enforces nothing itself (only BearerToken guards access),
// and the Authorizer only answers the components that delegate authorisation
// to it. It must be safe for concurrent use.
type Authorizer interface {
	Authorize(spec authorizationv1.SubjectAccessReviewSpec) (allowed bool, reason string)
}

// Well-known users and groups of Kubernetes.
const (
	// SystemMasters is the group the real API server allows everything.
	SystemMasters      = "system:masters"
	systemAnonymous    = "system:anonymous"
	allAuthenticated   = "system:authenticated"
	allUnauthenticated = "system:unauthenticated"
)

// StaticTokens is an Authenticator with a fixed set of tokens, like the real
// server's --token-auth-file. It must not change once the server runs.
type StaticTokens map[string]authenticationv1.UserInfo

// AuthenticateToken returns a copy of the user of a known token.
func (t StaticTokens) AuthenticateToken(token string) (authenticationv1.UserInfo, bool) {
	u, ok := t[token]
	if !ok {
		return authenticationv1.UserInfo{}, false
	}
	return *u.DeepCopy(), true
}

// AllowGroups is an Authorizer that allows the users of its groups
// everything, and nothing to anybody else. AllowGroups{SystemMasters} is the
// real server's superuser rule without RBAC above it.
type AllowGroups []string

// Authorize allows a user in one of the groups.
func (g AllowGroups) Authorize(spec authorizationv1.SubjectAccessReviewSpec) (bool, string) {
	for _, group := range spec.Groups {
		if slices.Contains(g, group) {
			return true, ""
		}
	}
	if len(g) == 0 {
		return false, "Batkube allows nobody"
	}
	return false, fmt.Sprintf("Batkube allows only the groups %s", strings.Join(g, ", "))
}

// bearerTokenUser is who a request with the BearerToken is, when the
// Authenticator does not know that token: an administrator.
func bearerTokenUser() authenticationv1.UserInfo {
	return authenticationv1.UserInfo{Username: "batkube:admin", UID: "batkube-admin", Groups: []string{SystemMasters, allAuthenticated}}
}

// anonymousUser is who a request without credentials is.
func anonymousUser() authenticationv1.UserInfo {
	return authenticationv1.UserInfo{Username: systemAnonymous, Groups: []string{allUnauthenticated}}
}

// errInvalidToken is the real server's error for a token no authenticator
// knows (k8s.io/apiserver/pkg/authentication/request/bearertoken).
const errInvalidToken = "invalid bearer token"

// authenticateToken returns the user of a token: the Authenticator's, or the
// administrator for the BearerToken. As the real server does, it adds
// system:authenticated to the groups of an authenticated user (but
// system:anonymous, or a user already in system:authenticated or
// system:unauthenticated).
func (s *Server) authenticateToken(token string) (authenticationv1.UserInfo, bool) {
	u, ok := authenticationv1.UserInfo{}, false
	if s.opts.Authenticator != nil {
		u, ok = s.opts.Authenticator.AuthenticateToken(token)
	}
	if !ok && s.opts.BearerToken != "" && token == s.opts.BearerToken {
		u, ok = bearerTokenUser(), true
	}
	if !ok {
		return authenticationv1.UserInfo{}, false
	}
	if u.Username != systemAnonymous && !slices.Contains(u.Groups, allAuthenticated) && !slices.Contains(u.Groups, allUnauthenticated) {
		u.Groups = append(slices.Clip(u.Groups), allAuthenticated)
	}
	return u, true
}

// requester returns who sent a request, from its bearer token: no token (or
// no token authentication configured, when the real server ignores tokens)
// is system:anonymous; a token nobody knows is 401 Unauthorized.
func (s *Server) requester(r *http.Request) (authenticationv1.UserInfo, error) {
	token, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok || (s.opts.Authenticator == nil && s.opts.BearerToken == "") {
		return anonymousUser(), nil
	}
	if u, ok := s.authenticateToken(token); ok {
		return u, nil
	}
	return authenticationv1.UserInfo{}, apierrors.NewUnauthorized("Unauthorized")
}

// bearerToken extracts the token of an Authorization header the way the real
// server's bearer token authenticator does.
func bearerToken(header string) (string, bool) {
	parts := strings.SplitN(strings.TrimSpace(header), " ", 3)
	if len(parts) < 2 || strings.ToLower(parts[0]) != "bearer" || parts[1] == "" {
		return "", false
	}
	return parts[1], true
}

// authorize decides an access review: everything is allowed without an
// Authorizer, as Batkube has no RBAC.
func (s *Server) authorize(spec authorizationv1.SubjectAccessReviewSpec) (bool, string) {
	if s.opts.Authorizer == nil {
		return true, ""
	}
	return s.opts.Authorizer.Authorize(spec)
}
