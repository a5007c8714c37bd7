package simulation

import (
	"encoding/json"
	"net/http"

	"github.com/batkube/batkube/pkg/broker"
)

// ProgressPath serves a simulation's progress as JSON (broker.Progress).
const ProgressPath = "/batkube/v1/progress"

// progressHandler serves ProgressPath.
type progressHandler struct{ b *broker.Broker }

func (progressHandler) Handles(path string) bool { return path == ProgressPath }

func (h progressHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "only GET", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(h.b.Progress())
}
