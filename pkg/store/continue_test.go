package store

import (
	"errors"
	"testing"
)

func TestContinueTokenRoundTrips(t *testing.T) {
	tests := []continueToken{
		{rv: 1, after: key{namespace: "ns", name: "a"}},
		{rv: 1 << 40, after: key{name: "cluster-scoped"}},
		{rv: latestRV, after: key{namespace: "kube-system", name: "x.y-z"}},
	}
	for _, want := range tests {
		t.Run(want.after.String(), func(t *testing.T) {
			s, err := encodeContinue(want)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeContinue(s)
			if err != nil || got != want {
				t.Errorf("got %+v, %v; want %+v", got, err, want)
			}
		})
	}
}

func TestDecodeContinueRejectsMalformedTokens(t *testing.T) {
	tests := map[string]string{
		"not base64":    "***",
		"not json":      encodeRaw("nope"),
		"wrong version": encodeRaw(`{"v":"meta.k8s.io/v2","rv":3,"start":"ns/a"}`),
		"zero rv":       encodeRaw(`{"v":"meta.k8s.io/v1","rv":0,"start":"ns/a"}`),
		"negative rv":   encodeRaw(`{"v":"meta.k8s.io/v1","rv":-2,"start":"ns/a"}`),
		"no slash":      encodeRaw(`{"v":"meta.k8s.io/v1","rv":3,"start":"a"}`),
		"no name":       encodeRaw(`{"v":"meta.k8s.io/v1","rv":3,"start":"ns/"}`),
		"two slashes":   encodeRaw(`{"v":"meta.k8s.io/v1","rv":3,"start":"ns/a/b"}`),
		"empty":         "",
	}
	for name, tok := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := decodeContinue(tok); !errors.Is(err, errInvalidContinue) {
				t.Errorf("got %v, want errInvalidContinue", err)
			}
		})
	}
}

func FuzzDecodeContinue(f *testing.F) {
	f.Add(encodeRaw(`{"v":"meta.k8s.io/v1","rv":3,"start":"ns/a"}`))
	f.Add(encodeRaw(`{"v":"meta.k8s.io/v1","rv":-1,"start":"/n"}`))
	f.Add("")
	f.Add("e30")
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := decodeContinue(s)
		if err != nil {
			if !errors.Is(err, errInvalidContinue) {
				t.Fatalf("error %v does not wrap errInvalidContinue", err)
			}
			return
		}
		if tok.rv == 0 || tok.rv < latestRV || tok.after.name == "" {
			t.Fatalf("accepted an invalid token %+v", tok)
		}
		again, err := encodeContinue(tok)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := decodeContinue(again); err != nil || back != tok {
			t.Fatalf("re-encoding %+v gave %+v, %v", tok, back, err)
		}
	})
}
