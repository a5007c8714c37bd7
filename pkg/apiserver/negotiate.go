package apiserver

import (
	"mime"
	"strings"
)

// Media types of the Kubernetes API.
const (
	mediaJSON     = "application/json"
	mediaYAML     = "application/yaml"
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
)

// shape says what kind of document a client asked for besides the object itself.
type shape int

const (
	shapeObject   shape = iota // the object or list itself
	shapeTable                 // meta.k8s.io Table (kubectl get)
	shapeMetadata              // meta.k8s.io PartialObjectMetadata(List)
)

// format is the negotiated representation of a response.
type format struct {
	media string // mediaJSON, mediaYAML or mediaProtobuf
	shape shape
}

// negotiate picks the response format from an Accept header, the way the
// real API server does: the first acceptable media range wins, `*/*` and a
// missing header mean JSON, and the `as=Table` / `as=PartialObjectMetadata`
// transformations of meta.k8s.io are honoured. It reports false when nothing
// in the header can be served (406).
func negotiate(accept string) (format, bool) { return negotiateFor(accept, true) }

// negotiateFor is negotiate for a resource whose objects have a protobuf
// encoding or not (custom resources: only their tables and metadata do,
// as on the real server).
func negotiateFor(accept string, protobufObjects bool) (format, bool) {
	if strings.TrimSpace(accept) == "" {
		return format{media: mediaJSON}, true
	}
	for _, part := range strings.Split(accept, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		mt, params, err := mime.ParseMediaType(part)
		if err != nil {
			continue
		}
		if q, ok := params["q"]; ok && (q == "0" || q == "0.0" || q == "0.00" || q == "0.000") {
			continue
		}
		var f format
		switch mt {
		case mediaJSON, mediaYAML, mediaProtobuf:
			f.media = mt
		case "*/*", "application/*":
			f.media = mediaJSON
		default:
			continue
		}
		switch as := params["as"]; as {
		case "":
		case "Table":
			if params["g"] != "meta.k8s.io" || (params["v"] != "v1" && params["v"] != "v1beta1") || f.media == mediaYAML {
				continue
			}
			f.shape = shapeTable
		case "PartialObjectMetadata", "PartialObjectMetadataList":
			if params["g"] != "meta.k8s.io" || (params["v"] != "v1" && params["v"] != "v1beta1") || f.media == mediaYAML {
				continue
			}
			f.shape = shapeMetadata
		default:
			continue
		}
		if f.media == mediaProtobuf && f.shape == shapeObject && !protobufObjects {
			continue
		}
		return f, true
	}
	return format{}, false
}

// isMediaType reports whether the Content-Type header value ct names media.
func isMediaType(ct, media string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == media
}
