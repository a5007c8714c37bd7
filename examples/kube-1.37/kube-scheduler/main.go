// Command kube-scheduler is the upstream kube-scheduler, unmodified, built
// from the Kubernetes Go modules at the version pinned in go.mod.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand()))
}
