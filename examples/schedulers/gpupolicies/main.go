// Command gpu-scheduler is kube-scheduler 1.37, unmodified, with the six
// GPU placement policies of the FGD paper compiled in as Score plugins
// (package gpuscore): RandomScore, DotProductScore, GpuClusteringScore,
// GpuPackingScore, BestFitScore and FGDScore. A profile enables one of
// them (see config/).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/batkube/batkube/examples/schedulers/gpupolicies/gpuscore"
)

func main() {
	var opts []app.Option
	for _, name := range gpuscore.Names() {
		opts = append(opts, app.WithPlugin(name, gpuscore.Factory(name)))
	}
	os.Exit(cli.Run(app.NewSchedulerCommand(opts...)))
}
