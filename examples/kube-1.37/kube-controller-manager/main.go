// Command kube-controller-manager is the upstream kube-controller-manager,
// unmodified, built from the Kubernetes Go modules at the version pinned in
// go.mod, with the same imports as upstream's cmd/kube-controller-manager
// (its client-go metrics, among them the work queues' that Batkube's settle
// policy reads, are registered by one of them).
package main

import (
	"os"
	_ "time/tzdata" // for CronJob time zones, as upstream

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
