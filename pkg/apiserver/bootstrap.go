package apiserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AuthenticationConfigMap is the ConfigMap (in kube-system) where a real
// kube-apiserver publishes how its delegating clients (kube-scheduler,
// aggregated servers) authenticate requests: its client CA and the
// front-proxy's. They read it at start and retry, logging an error, as long
// as it is missing or incomplete.
const AuthenticationConfigMap = "extension-apiserver-authentication"

// createAuthenticationConfigMap publishes AuthenticationConfigMap as
// kube-apiserver does, with the bundle of a client CA created for this
// server, whose key is thrown away: no client certificate is ever
// accepted, tokens are (TokenReview).
func (s *Server) createAuthenticationConfigMap(ctx context.Context) error {
	ca, err := selfSignedCA("batkube-client-ca")
	if err != nil {
		return fmt.Errorf("creating the client CA of %s: %w", AuthenticationConfigMap, err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: AuthenticationConfigMap, Namespace: metav1.NamespaceSystem},
		Data: map[string]string{
			"client-ca-file":                     ca,
			"requestheader-client-ca-file":       ca,
			"requestheader-allowed-names":        `[]`,
			"requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`,
			"requestheader-group-headers":        `["X-Remote-Group"]`,
			"requestheader-username-headers":     `["X-Remote-User"]`,
			"requestheader-uid-headers":          `["X-Remote-Uid"]`,
		},
	}
	r, ok := s.catalog.byGVR[corev1.SchemeGroupVersion.WithResource("configmaps")]
	if !ok {
		return fmt.Errorf("the spec serves no configmaps")
	}
	if _, err := s.create(ctx, r, cm, false); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return nil
}

// selfSignedCA returns the PEM certificate of a new CA named cn.
func selfSignedCA(cn string) (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return "", err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), nil
}
