package store

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// continueVersion tags the continue tokens this store writes.
const continueVersion = "meta.k8s.io/v1"

// latestRV in a continue token asks to continue at the current
// resourceVersion (the token the 410 of an expired continue carries).
const latestRV = -1

// continueToken is where the next page of a list starts.
type continueToken struct {
	rv    int64 // the list's resourceVersion, or latestRV
	after key   // the last key of the previous page
}

// wireToken is the JSON inside a continue token (base64url, unpadded).
type wireToken struct {
	Version string `json:"v"`
	RV      int64  `json:"rv"`
	Start   string `json:"start"`
}

func encodeContinue(t continueToken) (string, error) {
	b, err := json.Marshal(wireToken{Version: continueVersion, RV: t.rv, Start: t.after.String()})
	if err != nil {
		return "", fmt.Errorf("store: encoding a continue token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

var errInvalidContinue = errors.New("continue key is not valid")

// decodeContinue parses a client-supplied continue token.
func decodeContinue(s string) (continueToken, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return continueToken{}, fmt.Errorf("%w: %w", errInvalidContinue, err)
	}
	var w wireToken
	if err := json.Unmarshal(b, &w); err != nil {
		return continueToken{}, fmt.Errorf("%w: %w", errInvalidContinue, err)
	}
	if w.Version != continueVersion {
		return continueToken{}, fmt.Errorf("%w: server does not recognize this encoded version %q", errInvalidContinue, w.Version)
	}
	if w.RV == 0 || w.RV < latestRV {
		return continueToken{}, fmt.Errorf("%w: incorrect encoded start resourceVersion (version %s)", errInvalidContinue, continueVersion)
	}
	ns, name, ok := strings.Cut(w.Start, "/")
	if !ok || name == "" || strings.Contains(name, "/") {
		return continueToken{}, fmt.Errorf("%w: encoded start key %q is not namespace/name", errInvalidContinue, w.Start)
	}
	return continueToken{rv: w.RV, after: key{namespace: ns, name: name}}, nil
}
