// Command apigen produces Batkube's generated API code: `apigen spec` builds
// swagger.json from the official Kubernetes specs, and `apigen wiring`
// generates restapi/zz_generated_wiring.go, which hands every operation of the
// generated server to pkg/apiserver. regenerate-api.sh runs both around
// go-swagger.
package main

import (
	"fmt"
	"os"
)

const usage = `usage:
  apigen spec -out swagger.json -v3 pkg/openapi/v3   build the spec from the Kubernetes modules
  apigen wiring -spec swagger.json -out restapi/zz_generated_wiring.go
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "spec":
		err = runSpec(os.Args[2:])
	case "wiring":
		err = runWiring(os.Args[2:])
	default:
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "apigen:", err)
		os.Exit(1)
	}
}
