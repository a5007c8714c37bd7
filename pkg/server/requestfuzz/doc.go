// Package requestfuzz holds FuzzRequests, which sends arbitrary requests to
// a real Batkube API server. It is a package of its own so that its fuzzing
// build instruments the server's dependencies and nothing else: pkg/server's
// other tests bring client-go's clientsets, informers and apply
// configurations, which a fuzzing build would compile again, instrumented,
// for a target that never calls them.
package requestfuzz
