// Package openapi serves the OpenAPI documents of the Kubernetes API:
// /openapi/v2 (the root swagger spec, JSON or protobuf) and /openapi/v3 (an
// index and one document per group version, embedded from v3/).
package openapi

import (
	"bytes"
	"crypto/sha512"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"github.com/munnerz/goautoneg"
	"google.golang.org/protobuf/proto"
)

// v3Files are the group version documents of the 1.37 spec
// (api/openapi-spec/v3), named like "apis__apps__v1_openapi.json".
//
//go:embed v3/*.json
var v3Files embed.FS

// Paths served.
const (
	v2Path       = "/openapi/v2"
	v3Path       = "/openapi/v3"
	v3Prefix     = v3Path + "/"
	v3FileSuffix = "_openapi.json"
)

// Media types. Clients ask for protobuf with the deprecated "@" spelling
// (client-go's OpenAPISchema sends application/com.github.proto-openapi.spec.v2@v1.0+protobuf);
// the server answers with the "." one.
const (
	mediaJSON             = "application/json"
	mediaV2Protobuf       = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	mediaV2ProtobufLegacy = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
	mediaV3Protobuf       = "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"
	mediaV3ProtobufLegacy = "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"
)

// OpenAPI serves the OpenAPI documents. It is safe for concurrent use.
//
// Nothing is read, hashed or converted before it is first asked for: most
// runs never ask for any of these documents (kubectl explain and apply do),
// and hashing the ~17 MB of them at start was most of the server's start-up.
// The first request pays it once; every request gets the same bytes and
// ETags.
type OpenAPI struct {
	v2      *document
	v3      map[string]*document
	v3Index func() (index, error)
}

// index is the /openapi/v3 document and its quoted ETag.
type index struct {
	body []byte
	tag  string
}

// document is one OpenAPI document: its JSON and hash, and its protobuf
// form, each computed on first use.
type document struct {
	content  func() (content, error)
	protobuf func() ([]byte, error)
}

type content struct {
	json []byte
	hash string // SHA-512 of json, upper-case hex
}

func newDocument(load func() ([]byte, error), toProto func([]byte) ([]byte, error)) *document {
	d := &document{}
	d.content = sync.OnceValues(func() (content, error) {
		body, err := load()
		if err != nil {
			return content{}, err
		}
		return content{json: body, hash: hashOf(body)}, nil
	})
	d.protobuf = sync.OnceValues(func() ([]byte, error) {
		c, err := d.content()
		if err != nil {
			return nil, err
		}
		return toProto(c.json)
	})
	return d
}

func hashOf(b []byte) string {
	sum := sha512.Sum512(b)
	return strings.ToUpper(hex.EncodeToString(sum[:]))
}

func v2ToProto(b []byte) ([]byte, error) {
	doc, err := openapiv2.ParseDocument(b)
	if err != nil {
		return nil, fmt.Errorf("openapi: parsing the v2 spec: %w", err)
	}
	return proto.Marshal(doc)
}

func v3ToProto(b []byte) ([]byte, error) {
	doc, err := openapiv3.ParseDocument(b)
	if err != nil {
		return nil, fmt.Errorf("openapi: parsing a v3 spec: %w", err)
	}
	return proto.Marshal(doc)
}

// v3Discovery is the /openapi/v3 index.
type v3Discovery struct {
	Paths map[string]v3GroupVersion `json:"paths"`
}

type v3GroupVersion struct {
	ServerRelativeURL string `json:"serverRelativeURL"`
}

// New serves v2 (the root swagger.json) at /openapi/v2 and the embedded v3
// documents under /openapi/v3. v2 must be JSON: it is checked when first
// served.
func New(v2 []byte) (*OpenAPI, error) {
	o := &OpenAPI{
		v2: newDocument(func() ([]byte, error) {
			if !json.Valid(v2) {
				return nil, errors.New("openapi: the v2 spec is not valid JSON")
			}
			return v2, nil
		}, v2ToProto),
		v3: map[string]*document{},
	}
	entries, err := fs.ReadDir(v3Files, "v3")
	if err != nil {
		return nil, fmt.Errorf("openapi: reading the v3 documents: %w", err)
	}
	for _, e := range entries {
		key, ok := groupVersionKey(e.Name())
		if !ok {
			continue
		}
		name := "v3/" + e.Name()
		o.v3[key] = newDocument(func() ([]byte, error) {
			body, err := v3Files.ReadFile(name)
			if err != nil {
				return nil, fmt.Errorf("openapi: reading %s: %w", name, err)
			}
			return body, nil
		}, v3ToProto)
	}
	if len(o.v3) == 0 {
		return nil, errors.New("openapi: no v3 documents embedded")
	}
	o.v3Index = sync.OnceValues(o.buildV3Index)
	return o, nil
}

// buildV3Index lists every v3 document with the URL of its current version.
func (o *OpenAPI) buildV3Index() (index, error) {
	doc := v3Discovery{Paths: map[string]v3GroupVersion{}}
	for key, d := range o.v3 {
		c, err := d.content()
		if err != nil {
			return index{}, err
		}
		doc.Paths[key] = v3GroupVersion{ServerRelativeURL: serverRelativeURL(key, c.hash)}
	}
	body, err := json.Marshal(doc)
	if err != nil {
		return index{}, fmt.Errorf("openapi: encoding the v3 index: %w", err)
	}
	return index{body: body, tag: strconv.Quote(hashOf(body))}, nil
}

// V3Document returns the OpenAPI v3 document of a group version ("" for
// the core group), as the server serves it under /openapi/v3: the types
// of its kinds and every type they refer to.
func V3Document(group, version string) ([]byte, error) {
	name := "api__" + version
	if group != "" {
		name = "apis__" + group + "__" + version
	}
	data, err := v3Files.ReadFile("v3/" + name + v3FileSuffix)
	if err != nil {
		return nil, fmt.Errorf("openapi: no v3 document for %s/%s: %w", group, version, err)
	}
	return data, nil
}

// groupVersionKey turns "apis__apps__v1_openapi.json" into "apis/apps/v1".
func groupVersionKey(file string) (string, bool) {
	name, ok := strings.CutSuffix(file, v3FileSuffix)
	if !ok || name == "" {
		return "", false
	}
	return strings.ReplaceAll(name, "__", "/"), true
}

func serverRelativeURL(key, hash string) string {
	return v3Prefix + key + "?" + url.Values{"hash": {hash}}.Encode()
}

// GroupVersions returns the keys of the v3 index ("api/v1", "apis/apps/v1", ...), sorted.
func (o *OpenAPI) GroupVersions() []string {
	keys := make([]string, 0, len(o.v3))
	for k := range o.v3 {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Handles reports whether path is an OpenAPI document served here.
func (o *OpenAPI) Handles(path string) bool {
	switch path {
	case v2Path, v3Path:
		return true
	}
	key, ok := strings.CutPrefix(path, v3Prefix)
	if !ok {
		return false
	}
	_, ok = o.v3[key]
	return ok
}

// ServeHTTP answers /openapi/v2, /openapi/v3 and /openapi/v3/{group version}.
func (o *OpenAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "405: Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	switch path := r.URL.Path; {
	case path == v2Path:
		o.serveDocument(w, r, o.v2, mediaV2Protobuf, mediaV2ProtobufLegacy, false)
	case path == v3Path:
		idx, err := o.v3Index()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		// The real server labels this JSON text/plain (it lets
		// http.ServeContent sniff it); application/json is what it is.
		w.Header().Set("Content-Type", mediaJSON)
		w.Header().Set("ETag", idx.tag)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(idx.body))
	case strings.HasPrefix(path, v3Prefix):
		d, ok := o.v3[strings.TrimPrefix(path, v3Prefix)]
		if !ok {
			http.NotFound(w, r)
			return
		}
		o.serveDocument(w, r, d, mediaV3Protobuf, mediaV3ProtobufLegacy, true)
	default:
		http.NotFound(w, r)
	}
}

// serveDocument negotiates JSON or protobuf like kube-openapi's handlers: the
// first Accept clause (by quality) that matches wins, `*/*` and no header
// mean JSON, nothing acceptable is 406. A v3 request whose `hash` is current
// is cached for good; a stale one is redirected to the current URL.
func (o *OpenAPI) serveDocument(w http.ResponseWriter, r *http.Request, d *document, protobufMedia, protobufLegacy string, v3 bool) {
	c, err := d.content()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Add("Vary", "Accept")
	accept := r.Header.Get("Accept")
	if accept == "" {
		accept = "*/*"
	}
	offered := []struct{ accepted, answered string }{
		{mediaJSON, mediaJSON},
		{protobufLegacy, protobufMedia},
		{protobufMedia, protobufMedia},
	}
	for _, clause := range goautoneg.ParseAccept(accept) {
		for _, offer := range offered {
			typ, sub, _ := strings.Cut(offer.accepted, "/")
			if (clause.Type != typ && clause.Type != "*") || (clause.SubType != sub && clause.SubType != "*") {
				continue
			}
			body := c.json
			if offer.answered != mediaJSON {
				var err error
				if body, err = d.protobuf(); err != nil {
					http.Error(w, err.Error(), http.StatusServiceUnavailable)
					return
				}
			}
			if v3 {
				if hash := r.URL.Query().Get("hash"); hash != "" {
					if hash != c.hash {
						http.Redirect(w, r, serverRelativeURL(strings.TrimPrefix(r.URL.Path, v3Prefix), c.hash), http.StatusMovedPermanently)
						return
					}
					w.Header().Set("Cache-Control", "public, immutable")
					w.Header().Set("Expires", time.Now().AddDate(1, 0, 0).UTC().Format(http.TimeFormat))
				}
			}
			w.Header().Set("Content-Type", offer.answered)
			w.Header().Set("ETag", strconv.Quote(c.hash))
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
			return
		}
	}
	w.WriteHeader(http.StatusNotAcceptable)
}
