package discovery

import (
	"bytes"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"sigs.k8s.io/yaml"
)

// encoded is one representation of a document with its entity tag.
type encoded struct {
	body []byte
	etag string // quoted
}

// document holds the JSON and protobuf representations of a discovery
// document; YAML, which only people ask for, is converted from the JSON on
// request.
type document struct {
	json, protobuf encoded
}

// newDocument encodes obj. obj must carry its TypeMeta (apiVersion left empty
// where the API server strips it).
func newDocument(obj runtime.Object) (*document, error) {
	j, err := encode(obj, mediaJSON)
	if err != nil {
		return nil, err
	}
	p, err := encode(obj, mediaProtobuf)
	if err != nil {
		return nil, err
	}
	return &document{json: j, protobuf: p}, nil
}

// representation returns the document in one offered media type.
func (d *document) representation(media string) (encoded, error) {
	switch media {
	case mediaJSON:
		return d.json, nil
	case mediaProtobuf:
		return d.protobuf, nil
	case mediaYAML:
		y, err := yaml.JSONToYAML(d.json.body)
		if err != nil {
			return encoded{}, fmt.Errorf("discovery: converting to YAML: %w", err)
		}
		return encoded{body: y, etag: etagOf(y)}, nil
	}
	return encoded{}, fmt.Errorf("discovery: no encoder for %q", media)
}

// encode encodes obj in one media type.
func encode(obj runtime.Object, media string) (encoded, error) {
	var buf bytes.Buffer
	switch media {
	case mediaJSON, mediaYAML:
		// The API server's JSON serializer is encoding/json's Encoder.
		if err := json.NewEncoder(&buf).Encode(obj); err != nil {
			return encoded{}, fmt.Errorf("discovery: encoding %T as JSON: %w", obj, err)
		}
		if media == mediaYAML {
			y, err := yaml.JSONToYAML(buf.Bytes())
			if err != nil {
				return encoded{}, fmt.Errorf("discovery: encoding %T as YAML: %w", obj, err)
			}
			buf.Reset()
			buf.Write(y)
		}
	case mediaProtobuf:
		if err := protobuf.NewSerializer(nil, nil).Encode(obj, &buf); err != nil {
			return encoded{}, fmt.Errorf("discovery: encoding %T as protobuf: %w", obj, err)
		}
	default:
		return encoded{}, fmt.Errorf("discovery: no encoder for %q", media)
	}
	return encoded{body: buf.Bytes(), etag: etagOf(buf.Bytes())}, nil
}

// etagOf returns the quoted entity tag of a body: its SHA-512 in upper-case
// hexadecimal, like the API server's discovery and OpenAPI hashes.
func etagOf(body []byte) string {
	sum := sha512.Sum512(body)
	return strconv.Quote(strings.ToUpper(hex.EncodeToString(sum[:])))
}

// notModified reports whether an If-None-Match header matches etag.
func notModified(ifNoneMatch, etag string) bool {
	if ifNoneMatch == "" {
		return false
	}
	for _, candidate := range strings.Split(ifNoneMatch, ",") {
		candidate = strings.TrimPrefix(strings.TrimSpace(candidate), "W/")
		if candidate == etag || candidate == "*" {
			return true
		}
	}
	return false
}

// writeEncoded answers with one representation, or 304 when the client has it.
func writeEncoded(w http.ResponseWriter, r *http.Request, contentType string, e encoded, cacheable bool) {
	h := w.Header()
	h.Set("ETag", e.etag)
	h.Set("Vary", "Accept")
	if cacheable {
		h.Set("Cache-Control", "public")
	}
	if notModified(r.Header.Get("If-None-Match"), e.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(e.body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(e.body)
	}
}
