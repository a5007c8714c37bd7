// Package discovery serves the Kubernetes discovery documents (/api, /apis,
// /api/v1, /apis/{group}[/{version}], aggregated discovery v2 and /version),
// built once from the operations of the OpenAPI spec.
package discovery
