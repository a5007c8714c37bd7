// Package batkube holds swagger.json, the Kubernetes OpenAPI spec (with
// Batkube's edits) that regenerate-api.sh builds and generates the server
// of restapi/ from, for the server to serve at /openapi/v2.
package batkube

import _ "embed"

// SwaggerJSON is swagger.json. It is read only: the server serves these
// bytes as they are. (go-swagger's own embedded copies of the spec, which
// Go copied onto the heap at every start, are not generated:
// regenerate-api.sh passes --exclude-spec.)
//
//go:embed swagger.json
var SwaggerJSON []byte
