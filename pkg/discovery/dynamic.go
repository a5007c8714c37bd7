package discovery

import (
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/batkube/batkube/pkg/endpoint"
)

// Extras are what discovery says of a resource beyond its operations: its
// singular name, short names and categories (a custom resource's, from its
// definition).
type Extras struct {
	Singular               string
	ShortNames, Categories []string
}

// Dynamic serves the discovery of the spec's operations and of resources
// added at run time (custom resources): SetExtra rebuilds the documents,
// which requests in progress keep serving from the previous ones.
type Dynamic struct {
	static []endpoint.Operation
	info   version.Info
	mu     sync.Mutex // orders SetExtra
	cur    atomic.Pointer[Discovery]
}

var _ http.Handler = (*Dynamic)(nil)

// NewDynamic builds the discovery of ops.
func NewDynamic(ops []endpoint.Operation, info version.Info) (*Dynamic, error) {
	d, err := New(ops, info)
	if err != nil {
		return nil, err
	}
	dyn := &Dynamic{static: ops, info: info}
	dyn.cur.Store(d)
	return dyn, nil
}

// SetExtra serves the spec's operations and ops, whose resources have
// extras.
func (d *Dynamic) SetExtra(ops []endpoint.Operation, extras map[schema.GroupResource]Extras) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	next, err := newWithExtras(slices.Concat(d.static, ops), d.info, extras)
	if err != nil {
		return err
	}
	d.cur.Store(next)
	return nil
}

// Handles reports whether path is a discovery path now.
func (d *Dynamic) Handles(path string) bool { return d.cur.Load().Handles(path) }

func (d *Dynamic) ServeHTTP(w http.ResponseWriter, r *http.Request) { d.cur.Load().ServeHTTP(w, r) }
