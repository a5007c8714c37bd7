// This file is safe to edit. Once it exists it will not be overwritten.
// It is the only hand-written file of restapi/: it plugs the generated server
// into pkg/apiserver and nothing else.

package restapi

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"

	"github.com/go-openapi/runtime"
	"github.com/go-openapi/runtime/middleware"

	"github.com/batkube/batkube/pkg/endpoint"
	"github.com/batkube/batkube/pkg/routing"
	"github.com/batkube/batkube/restapi/operations"
)

// Configure builds the generated API with every operation wired to h and
// returns the complete handler: h's outer layer around the router. The
// router comes from the generated operation table (pkg/routing): no spec is
// loaded or analysed at start.
func Configure(h endpoint.Handler) (http.Handler, error) {
	api := operations.NewKubernetesAPI(nil)
	api.ServeError = h.ServeError
	api.Logger = func(string, ...any) {}
	consumers := h.Consumers()
	api.JSONConsumer = consumers["application/json"]
	api.ProtobufConsumer = consumers["application/vnd.kubernetes.protobuf"]
	api.YamlConsumer = consumers["application/yaml"]
	for mediaType, c := range consumers {
		api.RegisterConsumer(mediaType, c)
	}
	// Responders write their own bytes in the negotiated format.
	unused := runtime.ProducerFunc(func(io.Writer, any) error { return nil })
	api.JSONProducer, api.ProtobufProducer, api.YamlProducer = unused, unused, unused
	wireOperations(api, h)
	api.Init()
	router, err := routing.New(api, Operations)
	if err != nil {
		return nil, fmt.Errorf("restapi: %w", err)
	}
	api.Middleware = func(b middleware.Builder) http.Handler { return routing.Handler(api, router, b) }
	return h.Wrap(api.Serve(nil)), nil
}

// configureFlags, configureAPI, configureTLS and configureServer are the hooks
// of go-swagger's generated server.go, which Batkube does not use: its main
// (cmd/kubernetes-server) serves Configure's handler itself.
func configureFlags(*operations.KubernetesAPI) {}

func configureAPI(*operations.KubernetesAPI) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "restapi: serve restapi.Configure's handler", http.StatusNotImplemented)
	})
}

func configureTLS(*tls.Config) {}

func configureServer(*http.Server, string, string) {}
