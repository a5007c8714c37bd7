package openb

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/batkube/batkube/pkg/translate"
)

// GPURequest is what a pod asks of GPUs: Count whole GPUs, or, with Milli
// between 1 and 999, that many thousandths of one GPU; Models, if any, the
// GPU models it accepts (sorted, without duplicates).
type GPURequest struct {
	Count  int
	Milli  int64 // 0: whole GPUs
	Models []string
}

// gpuRequest reads a pod's GPU columns. exclusive rounds a share up to a
// whole GPU (the cluster without sharing). The reason is non-empty when
// the columns cannot be expressed.
func gpuRequest(p Pod, exclusive bool) (req GPURequest, reason Reason) {
	switch {
	case p.GPUs == 0 && p.GPUMilli == 0:
		return GPURequest{}, ""
	case p.GPUs == 0 || p.GPUMilli == 0 || p.GPUMilli > 1000:
		return GPURequest{}, ReasonInconsistentGPU
	case p.GPUs > 1 && p.GPUMilli < 1000:
		return GPURequest{}, ReasonSharedMultiGPU
	}
	req.Count = p.GPUs
	if p.GPUMilli < 1000 && !exclusive {
		req.Milli = p.GPUMilli
	}
	if len(p.GPUModels) > 0 {
		seen := map[string]bool{}
		for _, m := range p.GPUModels {
			if !seen[m] {
				seen[m] = true
				req.Models = append(req.Models, m)
			}
		}
		sort.Strings(req.Models)
	}
	return req, ""
}

// key identifies a request, for sharing one claim template.
func (r GPURequest) key() string {
	return strconv.Itoa(r.Count) + "/" + strconv.FormatInt(r.Milli, 10) + "/" + strings.Join(r.Models, "|")
}

// baseName is the claim template's name before collisions are resolved:
// gpu-2 (two whole GPUs), gpu-460m (460 thousandths of one), then the
// models, lower-cased, characters outside [a-z0-9] replaced by '-':
// gpu-1-v100m16-v100m32.
func (r GPURequest) baseName() string {
	name := "gpu-" + strconv.Itoa(r.Count)
	if r.Milli > 0 {
		name = "gpu-" + strconv.FormatInt(r.Milli, 10) + "m"
	}
	for _, m := range r.Models {
		var b strings.Builder
		for _, c := range strings.ToLower(m) {
			if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
				b.WriteRune(c)
			} else {
				b.WriteByte('-')
			}
		}
		name += "-" + strings.Trim(b.String(), "-")
	}
	if len(name) > maxBaseName {
		name = strings.TrimRight(name[:maxBaseName], "-")
	}
	return name
}

// maxBaseName keeps a template's name, with a collision suffix, well
// within the 253 characters of a Kubernetes object name.
const maxBaseName = 200

// Selector is the CEL expression that restricts the request to its models
// ("" when any model will do).
func (r GPURequest) Selector() string {
	if len(r.Models) == 0 {
		return ""
	}
	quoted := make([]string, len(r.Models))
	for i, m := range r.Models {
		quoted[i] = strconv.Quote(m)
	}
	return fmt.Sprintf("device.attributes[%q].model in [%s]", translate.GPUDriver, strings.Join(quoted, ", "))
}

// fits reports whether a node can hold the request at all: enough GPUs,
// of an accepted model, and shared ones for a share.
func (r GPURequest) fits(n Node, sharedGPUs bool) bool {
	if r.Count == 0 {
		return true
	}
	if n.GPUs < r.Count || (r.Milli > 0 && !sharedGPUs) {
		return false
	}
	if len(r.Models) == 0 {
		return true
	}
	for _, m := range r.Models {
		if m == n.Model {
			return true
		}
	}
	return false
}

// claimTemplates names the ResourceClaimTemplates of the requests, one per
// distinct request, in the order they are first asked for.
type claimTemplates struct {
	byKey map[string]string
	names map[string]bool
	order []GPURequest
}

func (c *claimTemplates) name(r GPURequest) string {
	if name, ok := c.byKey[r.key()]; ok {
		return name
	}
	if c.byKey == nil {
		c.byKey, c.names = map[string]string{}, map[string]bool{}
	}
	base := r.baseName()
	name := base
	for i := 2; c.names[name]; i++ {
		name = base + "-" + strconv.Itoa(i)
	}
	c.byKey[r.key()], c.names[name] = name, true
	c.order = append(c.order, r)
	return name
}
