package settle_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/batkube/batkube/pkg/settle"
)

// TestAutoEndEndsTheLongPolls: a scheduler waiting on the idle signal is
// answered Ended when the simulation ends through an Auto policy's
// Abilities.
func TestAutoEndEndsTheLongPolls(t *testing.T) {
	signals := settle.NewSignals()
	a := settle.NewAuto(signals, nil)
	srv := httptest.NewServer(signals)
	defer srv.Close()
	done := make(chan settle.IdleResponse, 1)
	go func() {
		resp, err := http.Post(srv.URL+settle.IdlePath, "application/json", strings.NewReader(`{"scheduler":"s","resourceVersion":"0","wait":true}`))
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		var out settle.IdleResponse
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Error(err)
		}
		done <- out
	}()
	end := a.Abilities().End
	if end == nil {
		t.Fatal("an Auto policy with idle signals has no End")
	}
	end()
	if out := <-done; !out.Ended {
		t.Fatalf("answer %+v, want Ended", out)
	}
}
