// Package signalclient is the client side of Batkube's idle signal (see
// package settle): a scheduler that knows when it has nothing left to do
// says so, and the simulation moves on at once, exactly when it should.
//
//	c, _ := signalclient.New(restConfig, "my-scheduler")
//	// first wait for a whole instant: started while the broker writes one,
//	// the lists would hold part of it
//	if _, err := c.IdleAndWait(ctx, "0"); err != nil { ... }
//	for {
//		pods, nodes := list()                  // note the lists' resourceVersions
//		bind(pods, nodes)
//		if nothing was bound {
//			// idle having seen everything up to the older list; wait for a change
//			if _, err := c.IdleAndWait(ctx, min(podsRV, nodesRV)); err != nil { ... }
//		}
//	}
//
// A scheduler that follows pods and nodes with informers instead decides,
// after each answer, once every informer has delivered its resource's
// change of the answer's Latest (see examples/schedulers/random), and
// signals the answer's ResourceVersion: the informers run apart, so one
// that delivered the latest change says nothing of the other's.
package signalclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"

	"github.com/batkube/batkube/pkg/settle"
)

// Client sends the idle signals of one scheduler.
type Client struct {
	http      *http.Client
	url       string
	scheduler string
}

// New returns a client for the API server of cfg, signalling as scheduler.
func New(cfg *rest.Config, scheduler string) (*Client, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("signalclient: %w", err)
	}
	return &Client{http: hc, url: strings.TrimSuffix(cfg.Host, "/") + settle.IdlePath, scheduler: scheduler}, nil
}

// Idle says that the scheduler has nothing left to do, having seen every
// change of pods and nodes up to resourceVersion rv.
func (c *Client) Idle(ctx context.Context, rv string) (settle.IdleResponse, error) {
	return c.post(ctx, settle.IdleRequest{Scheduler: c.scheduler, ResourceVersion: rv})
}

// IdleAndWait is Idle, then waits until pods or nodes change after rv (or
// the simulation ends: Ended is then set).
func (c *Client) IdleAndWait(ctx context.Context, rv string) (settle.IdleResponse, error) {
	return c.post(ctx, settle.IdleRequest{Scheduler: c.scheduler, ResourceVersion: rv, Wait: true})
}

func (c *Client) post(ctx context.Context, body settle.IdleRequest) (settle.IdleResponse, error) {
	var out settle.IdleResponse
	data, err := json.Marshal(body)
	if err != nil {
		return out, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(data))
	if err != nil {
		return out, fmt.Errorf("signalclient: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return out, fmt.Errorf("signalclient: %w", err)
	}
	defer resp.Body.Close()
	payload, err := io.ReadAll(resp.Body)
	if err != nil {
		return out, fmt.Errorf("signalclient: reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return out, fmt.Errorf("signalclient: %s: %s: %s (is this a Batkube simulation?)", c.url, resp.Status, strings.TrimSpace(string(payload)))
	}
	if err := json.Unmarshal(payload, &out); err != nil {
		return out, fmt.Errorf("signalclient: the answer: %w", err)
	}
	return out, nil
}

// ServerGone reports whether err, of a request to the Batkube server (the
// idle signal's or any other client's), says that the server has gone
// away: the connection refused, reset or broken, or closed before the
// whole answer came. Batkube's server closes when the simulation ends, so a scheduler
// that gets such an error after the run's end has nothing left to do.
func ServerGone(err error) bool {
	return err != nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		utilnet.IsProbableEOF(err)) // client-go's errors that say so in words only
}
