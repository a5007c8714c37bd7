package discovery

import (
	"github.com/munnerz/goautoneg"
)

// Media types of the discovery documents, in the server's order of preference
// (a `*/*` request gets the first).
const (
	mediaJSON     = "application/json"
	mediaYAML     = "application/yaml"
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
)

var offeredMedia = []string{mediaJSON, mediaYAML, mediaProtobuf}

// Aggregated discovery: the media type parameters a client sends to ask for
// it, and that the server echoes in the Content-Type of the answer.
const (
	aggregatedGroup   = "apidiscovery.k8s.io"
	aggregatedVersion = "v2"
	aggregatedKind    = "APIGroupDiscoveryList"
	aggregatedParams  = ";g=" + aggregatedGroup + ";v=" + aggregatedVersion + ";as=" + aggregatedKind
)

// choice is the negotiated representation of a discovery document.
type choice struct {
	media      string // one of offeredMedia
	aggregated bool   // apidiscovery.k8s.io/v2 APIGroupDiscoveryList
}

// contentType is the Content-Type header of the answer.
func (c choice) contentType() string {
	if c.aggregated {
		return c.media + aggregatedParams
	}
	return c.media
}

// negotiate picks the representation for an Accept header the way the API
// server does: clauses by decreasing quality (first wins among equals); a
// clause asking for a transformation (as, g, v) is taken only when it asks for
// aggregated discovery v2 and the endpoint serves it; stream variants are
// refused. An empty header means JSON. It reports false when no clause can be
// served (406).
func negotiate(accept string, aggregatedServed bool) (choice, bool) {
	if accept == "" {
		return choice{media: mediaJSON}, true
	}
	for _, clause := range goautoneg.ParseAccept(accept) {
		for _, media := range offeredMedia {
			if !matches(clause, media) {
				continue
			}
			c, ok := acceptParams(clause.Params, aggregatedServed)
			if !ok {
				continue
			}
			c.media = media
			return c, true
		}
	}
	return choice{}, false
}

// matches reports whether an Accept clause covers media ("application/json").
func matches(clause goautoneg.Accept, media string) bool {
	typ, sub := splitMedia(media)
	switch {
	case clause.Type == "*" && clause.SubType == "*":
		return true
	case clause.Type == typ && (clause.SubType == sub || clause.SubType == "*"):
		return true
	}
	return false
}

func splitMedia(media string) (typ, sub string) {
	for i := 0; i < len(media); i++ {
		if media[i] == '/' {
			return media[:i], media[i+1:]
		}
	}
	return media, ""
}

// acceptParams checks the parameters of a clause.
func acceptParams(params map[string]string, aggregatedServed bool) (choice, bool) {
	var c choice
	if params["stream"] != "" {
		return c, false
	}
	g, v, as := params["g"], params["v"], params["as"]
	if g == "" && v == "" && as == "" {
		return c, true
	}
	if !aggregatedServed || g != aggregatedGroup || v != aggregatedVersion || as != aggregatedKind {
		return c, false
	}
	c.aggregated = true
	return c, true
}
