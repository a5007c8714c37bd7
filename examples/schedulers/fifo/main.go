// Command fifo is a first-come first-served, first-fit Kubernetes
// scheduler in some 150 lines, written to be read: it takes the pending
// pods in the order they were created, binds each to the first node (by
// name) with room for its cpu and memory requests, and skips those that do
// not fit (greedy). It decides only on whole states of the cluster and
// tells Batkube when it has nothing left to do (the idle signal of package
// settle), so a simulation moves on the instant it is done, and the same
// workload gives the same outputs, byte for byte, run after run.
//
//	batkube-run -p PLATFORM -w WORKLOAD --scheduler-cmd 'bin/fifo --kubeconfig {kubeconfig}'
//
// With --ignore-capacity it binds every pod to the first node, room or
// not: a deliberately bad scheduler, whose pods the nodes' kubelets refuse
// (OutOfcpu).
package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/batkube/batkube/examples/internal/exmain"
	"github.com/batkube/batkube/examples/internal/room"
)

type options struct {
	exmain.Options
	IgnoreCapacity bool `long:"ignore-capacity" description:"bind every pod to the first node, room or not (a deliberately bad scheduler)"`
}

func main() { exmain.Main("fifo", run) }

func run(ctx context.Context, opts options) error {
	cs, idle, err := exmain.ClientsWithIdleSignal(opts.Kubeconfig, "fifo")
	if err != nil {
		return err
	}
	// Decide first on a whole instant: the first answer comes once the
	// broker has written all of one (started in the middle of the first
	// instant's writes, the lists would hold part of it).
	if answer, err := idle.IdleAndWait(ctx, "0"); err != nil || answer.Ended {
		return err
	}
	for {
		// A whole state: the live pods and the nodes, each list a
		// consistent snapshot; everything up to the older one is seen.
		pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.phase!=Succeeded,status.phase!=Failed"})
		if err != nil {
			return err
		}
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		bound, err := schedule(ctx, cs, opts, pods.Items, nodes.Items)
		if err != nil {
			return err
		}
		if bound > 0 {
			continue // look again: the bindings changed the cluster
		}
		seen := min(rv(pods.ResourceVersion), rv(nodes.ResourceVersion))
		answer, err := idle.IdleAndWait(ctx, strconv.FormatUint(seen, 10))
		if err != nil {
			return err
		}
		if answer.Ended {
			return nil
		}
	}
}

// schedule binds what it can of the pending pods and returns how many.
func schedule(ctx context.Context, cs kubernetes.Interface, opts options, pods []corev1.Pod, nodes []corev1.Node) (int, error) {
	slices.SortFunc(nodes, func(a, b corev1.Node) int { return naturalCompare(a.Name, b.Name) })
	free := map[string]corev1.ResourceList{}
	for _, n := range nodes {
		if !n.Spec.Unschedulable {
			free[n.Name] = n.Status.Allocatable.DeepCopy()
		}
	}
	var pending []corev1.Pod
	for _, p := range pods {
		switch {
		case p.Spec.NodeName != "":
			room.Take(free[p.Spec.NodeName], room.Requests(&p))
		case p.Spec.SchedulerName == opts.SchedulerName && p.DeletionTimestamp == nil:
			pending = append(pending, p)
		}
	}
	// First come, first served: creation instant, then name (w0-2 before w0-10).
	slices.SortStableFunc(pending, func(a, b corev1.Pod) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return naturalCompare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	bound := 0
	for _, p := range pending {
		req := room.Requests(&p)
		for _, n := range nodes {
			left, ok := free[n.Name]
			if !ok || !room.Admits(&n, &p) || (!opts.IgnoreCapacity && !room.Fits(left, req)) {
				continue
			}
			binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
				Target: corev1.ObjectReference{Kind: "Node", Name: n.Name}}
			if err := cs.CoreV1().Pods(p.Namespace).Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
				return bound, fmt.Errorf("binding %s/%s to %s: %w", p.Namespace, p.Name, n.Name, err)
			}
			room.Take(left, req)
			bound++
			break
		}
	}
	return bound, nil
}

func rv(s string) uint64 {
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}

// naturalCompare orders strings with their digit runs compared as numbers.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, _ := strconv.ParseUint(a[:da], 10, 64)
			nb, _ := strconv.ParseUint(b[:db], 10, 64)
			if na != nb {
				return cmp.Compare(na, nb)
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
