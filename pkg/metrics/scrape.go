package metrics

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// textFormat is the Accept header of a scrape: the Prometheus text format,
// which every Kubernetes component serves.
const textFormat = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// Scrape gets a component's whole /metrics in the Prometheus text format,
// with a bearer token if one is given. A nil client uses a short-lived
// one that accepts self-signed certificates (kube-scheduler's serving
// certificate is generated in memory).
func Scrape(ctx context.Context, client *http.Client, url, token string) ([]byte, error) {
	if client == nil {
		tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} // #nosec G402 -- a local component's self-signed certificate
		defer tr.CloseIdleConnections()
		client = &http.Client{Timeout: 30 * time.Second, Transport: tr}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("metrics: scraping %s: %w", url, err)
	}
	req.Header.Set("Accept", textFormat)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("metrics: scraping: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("metrics: scraping %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics: scraping %s: %s: %s", url, resp.Status, strings.TrimSpace(string(data)))
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		return nil, fmt.Errorf("metrics: scraping %s: Content-Type %q, not the Prometheus text format", url, ct)
	}
	return data, nil
}
