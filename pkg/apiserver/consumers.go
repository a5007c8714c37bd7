package apiserver

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/go-openapi/runtime"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/batkube/batkube/pkg/endpoint"
)

// Patch media types.
const (
	mediaJSONPatch      = "application/json-patch+json"
	mediaMergePatch     = "application/merge-patch+json"
	mediaStrategicPatch = "application/strategic-merge-patch+json"
	mediaApplyPatchYAML = "application/apply-patch+yaml"
)

// bodyMediaTypes are the media types accepted for request bodies.
var bodyMediaTypes = []string{mediaJSON, mediaYAML, mediaProtobuf}

// maxBodyBytes bounds a request body, as the real server does (3 MiB objects
// in etcd; it accepts a little more).
const maxBodyBytes = 6 << 20

// Consumers returns the body decoders of every media type the spec declares.
func (s *Server) Consumers() map[string]runtime.Consumer {
	raw := consumeWith(keepRaw)
	return map[string]runtime.Consumer{
		mediaJSON:           consumeWith(decodeJSONBody),
		mediaYAML:           consumeWith(decodeYAMLBody),
		mediaProtobuf:       consumeWith(s.decodeProtobuf),
		mediaJSONPatch:      raw,
		mediaMergePatch:     raw,
		mediaStrategicPatch: raw,
		mediaApplyPatchYAML: raw,
	}
}

// readBody reads a whole body; an empty one is io.EOF, which the generated
// binder reports as a missing body.
func readBody(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the request body: %w", err)
	}
	if len(data) == 0 {
		return nil, io.EOF
	}
	if len(data) > maxBodyBytes {
		return nil, fmt.Errorf("the request body is larger than %d bytes", maxBodyBytes)
	}
	return data, nil
}

// consumeWith is the consumer that reads a whole body (readBody) and
// decodes it into its target with decode.
func consumeWith(decode func(data []byte, target any) error) runtime.ConsumerFunc {
	return func(r io.Reader, target any) error {
		data, err := readBody(r)
		if err != nil {
			return err
		}
		return decode(data, target)
	}
}

// decodeBody decodes a whole body of one of the media types the fast path
// takes, as the consumer of that media type does.
func (s *Server) decodeBody(media string, data []byte, target any) error {
	switch media {
	case mediaJSON:
		return decodeJSONBody(data, target)
	case mediaProtobuf:
		return s.decodeProtobuf(data, target)
	case mediaJSONPatch, mediaMergePatch, mediaStrategicPatch, mediaApplyPatchYAML:
		return keepRaw(data, target)
	}
	return fmt.Errorf("no decoder for %q", media)
}

func decodeJSONBody(data []byte, target any) error {
	if pb, ok := target.(*endpoint.PatchBody); ok {
		*pb = data // a PATCH with a non-patch media type: refused (415) by the handler
		return nil
	}
	return decodeJSON(data, target)
}

// decodeJSON decodes like the real server: case-sensitive field names, and
// integers kept as int64 in untyped fields.
func decodeJSON(data []byte, target any) error {
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, target); err != nil {
		return fmt.Errorf("decoding the JSON body: %w", err)
	}
	return nil
}

// decodeYAMLBody decodes a YAML body as the JSON it converts to.
func decodeYAMLBody(data []byte, target any) error {
	if pb, ok := target.(*endpoint.PatchBody); ok {
		*pb = data
		return nil
	}
	doc, err := yaml.YAMLToJSON(data)
	if err != nil {
		return fmt.Errorf("decoding the YAML body: %w", err)
	}
	return decodeJSON(doc, target)
}

func (s *Server) decodeProtobuf(data []byte, target any) error {
	into, ok := target.(k8sruntime.Object)
	if !ok {
		return fmt.Errorf("cannot decode protobuf into %T", target)
	}
	if _, _, err := s.protobuf.Decode(data, nil, into); err != nil {
		return fmt.Errorf("decoding the protobuf body: %w", err)
	}
	return nil
}

// keepRaw keeps a patch body as it came.
func keepRaw(data []byte, target any) error {
	switch t := target.(type) {
	case *endpoint.PatchBody:
		*t = data
	case *json.RawMessage:
		*t = data
	case *[]byte:
		*t = data
	case *any:
		*t = json.RawMessage(data)
	default:
		return fmt.Errorf("cannot keep a raw body in %T", target)
	}
	return nil
}
