// Command qos-scheduler is kube-scheduler 1.37, unmodified, with the
// QoS-driven QueueSort plugin (package qosdriven) compiled in. Enable it in
// a profile of the KubeSchedulerConfiguration (see config.yaml).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/batkube/batkube/examples/schedulers/qos/qosdriven"
)

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand(app.WithPlugin(qosdriven.Name, qosdriven.New))))
}
