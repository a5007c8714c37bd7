// Command timed-scheduler is a small time-virtualised Kubernetes scheduler:
// it places the pending pods in rounds, at every multiple of --period of
// simulated time, first fit by cpu and memory requests. It reads time from
// Batkube's simulated clock (pkg/simtime/clockclient), so its rounds fall exactly on
// the simulated grid whatever the wall-clock speed of the simulation: an
// example of a scheduler whose own timing is part of the experiment.
//
//	batkube-run -p PLATFORM -w WORKLOAD --scheduler-cmd 'bin/timed-scheduler --kubeconfig {kubeconfig} --period 10s'
package main

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/batkube/batkube/examples/internal/exmain"
	"github.com/batkube/batkube/examples/internal/room"
	"github.com/batkube/batkube/pkg/simtime/clockclient"
)

type options struct {
	exmain.Options
	Period time.Duration `long:"period" default:"10s" description:"simulated time between two scheduling rounds"`
}

func main() { exmain.Main("timed-scheduler", run) }

func run(ctx context.Context, opts options) error {
	if opts.Period <= 0 {
		return errors.New("--period must be positive")
	}
	cfg, cs, err := exmain.Clients(opts.Kubeconfig)
	if err != nil {
		return err
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	clk, err := clockclient.New(cfg.Host, clockclient.Options{HTTPClient: httpClient, BearerToken: cfg.BearerToken})
	if err != nil {
		return err
	}
	defer clk.Close()

	s := &scheduler{cs: cs, name: opts.SchedulerName}
	// Rounds fall on multiples of the period (on the simulated clock: :00,
	// :10, :20... for 10s), whenever the scheduler started: runs are
	// reproducible.
	now, err := clk.NowContext(ctx)
	if err != nil {
		return err
	}
	next := now.Truncate(opts.Period).Add(opts.Period)
	slog.Info("scheduling in rounds", "period", opts.Period, "now", now, "first", next)
	for {
		now, err := clk.WaitUntil(ctx, next)
		if err != nil {
			return err
		}
		if err := s.round(ctx); err != nil {
			return err
		}
		slog.Info("round", "simulatedTime", now)
		if last := now.Truncate(opts.Period); last.After(next) {
			next = last // woken late: skip the rounds missed
		}
		next = next.Add(opts.Period)
	}
}

type scheduler struct {
	cs   kubernetes.Interface
	name string
}

// round binds every pending pod that fits, oldest first, first fit. It
// reads pods and nodes afresh from the server rather than from informer
// caches: the tick that wakes it travels on its own connection and may
// overtake the watch events of the same simulated instant, while a list
// always includes everything the broker applied before firing the timer.
// That makes each round see exactly the cluster at its instant, and runs
// reproducible.
func (s *scheduler) round(ctx context.Context) error {
	podList, err := s.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	nodeList, err := s.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	nodes := make([]*corev1.Node, len(nodeList.Items))
	for i := range nodeList.Items {
		nodes[i] = &nodeList.Items[i]
	}
	all := make([]*corev1.Pod, len(podList.Items))
	for i := range podList.Items {
		all[i] = &podList.Items[i]
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	free := map[string]corev1.ResourceList{}
	for _, n := range nodes {
		free[n.Name] = n.Status.Allocatable.DeepCopy()
	}
	var pending []*corev1.Pod
	for _, p := range all {
		switch {
		case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil:
		case p.Spec.NodeName != "":
			room.Take(free[p.Spec.NodeName], room.Requests(p))
		case p.Spec.SchedulerName == s.name:
			pending = append(pending, p)
		}
	}
	sort.Slice(pending, func(i, j int) bool {
		if !pending[i].CreationTimestamp.Equal(&pending[j].CreationTimestamp) {
			return pending[i].CreationTimestamp.Before(&pending[j].CreationTimestamp)
		}
		return pending[i].Name < pending[j].Name
	})
	for _, p := range pending {
		req := room.Requests(p)
		for _, n := range nodes {
			if !fits(free[n.Name], req) {
				continue
			}
			err := s.cs.CoreV1().Pods(p.Namespace).Bind(ctx, &corev1.Binding{
				ObjectMeta: metav1.ObjectMeta{Name: p.Name, UID: p.UID},
				Target:     corev1.ObjectReference{Kind: "Node", Name: n.Name},
			}, metav1.CreateOptions{})
			if err != nil {
				slog.Warn("binding", "pod", p.Namespace+"/"+p.Name, "node", n.Name, "err", err)
				break
			}
			room.Take(free[n.Name], req)
			break
		}
	}
	return nil
}

// fits reports whether the cpu and memory of req fit in free (the rounds
// place by those two alone).
func fits(free, req corev1.ResourceList) bool {
	for _, k := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if f, r := free[k], req[k]; r.Cmp(f) > 0 {
			return false
		}
	}
	return true
}
