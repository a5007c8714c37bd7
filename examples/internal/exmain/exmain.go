// Package exmain is the main of Batkube's example schedulers: their flags
// (go-flags: --help on standard output, a usage error with exit code 2), a
// context cancelled on SIGINT and SIGTERM, and the way out: exit code 0
// when the run ends (interrupted, or the API server gone because the
// simulation is over, which is said on standard error), 1 with the error
// otherwise.
package exmain

import (
	"context"
	"errors"
	"fmt"
	"io"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/batkube/batkube/pkg/cli"
	"github.com/batkube/batkube/pkg/settle/signalclient"
)

// Options are the flags every example scheduler takes: a scheduler's
// options struct embeds them (go-flags reads an embedded struct's flags as
// its own).
type Options struct {
	Kubeconfig    string `long:"kubeconfig" env:"KUBECONFIG" required:"true" description:"kubeconfig of the Batkube server"`
	SchedulerName string `long:"scheduler-name" default:"default-scheduler" description:"schedule the pods that name this scheduler"`
}

// Clients reads a kubeconfig and returns its configuration, without a
// client-side rate limit (the server is in memory), and a clientset on it.
func Clients(kubeconfig string) (*rest.Config, *kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return cfg, cs, nil
}

// ClientsWithIdleSignal is Clients with, in place of the configuration, a
// client of Batkube's idle signal that signals in the name of the
// scheduler name.
func ClientsWithIdleSignal(kubeconfig, name string) (*kubernetes.Clientset, *signalclient.Client, error) {
	cfg, cs, err := Clients(kubeconfig)
	if err != nil {
		return nil, nil, err
	}
	idle, err := signalclient.New(cfg, name)
	if err != nil {
		return nil, nil, err
	}
	return cs, idle, nil
}

// Main parses the command line into options of type O (a go-flags options
// struct), then calls run with them, and exits (with the context and the
// exit of cli.Main).
func Main[O any](name string, run func(ctx context.Context, opts O) error) {
	cli.Main(command(name, run))
}

// command is the run, for cli.Main, of the example scheduler name: the
// opening of a command that takes flags only (cli.FlagsOnly: --help, a
// usage error, an argument left over refused), then run, whose error
// becomes the exit (Exit).
func command[O any](name string, run func(ctx context.Context, opts O) error) func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.FlagsOnly(cli.Command{Name: name, Usage: "[OPTIONS]"}, func(ctx context.Context, opts O, _, stderr io.Writer) int {
		return Exit(stderr, name, run(ctx, opts))
	})
}

// Exit is the exit code of a scheduler whose run returned err, and what it
// says on stderr: nothing for a run that ended or was interrupted, that
// the API server is gone when it is (the simulation ended: code 0), the
// error otherwise (code 1).
func Exit(stderr io.Writer, name string, err error) int {
	switch {
	case err == nil, errors.Is(err, context.Canceled):
		return 0
	case signalclient.ServerGone(err):
		fmt.Fprintf(stderr, "%s: the API server is gone: %v\n", name, err)
		return 0
	default:
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
}
