package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/batkube/batkube/pkg/server/servertest"
)

// schedulerInformers registers the informers kube-scheduler 1.37 starts and
// returns them by name.
func schedulerInformers(f informers.SharedInformerFactory) map[string]cache.SharedIndexInformer {
	return map[string]cache.SharedIndexInformer{
		"nodes":                  f.Core().V1().Nodes().Informer(),
		"namespaces":             f.Core().V1().Namespaces().Informer(),
		"services":               f.Core().V1().Services().Informer(),
		"replicationcontrollers": f.Core().V1().ReplicationControllers().Informer(),
		"persistentvolumes":      f.Core().V1().PersistentVolumes().Informer(),
		"persistentvolumeclaims": f.Core().V1().PersistentVolumeClaims().Informer(),
		"replicasets":            f.Apps().V1().ReplicaSets().Informer(),
		"statefulsets":           f.Apps().V1().StatefulSets().Informer(),
		"poddisruptionbudgets":   f.Policy().V1().PodDisruptionBudgets().Informer(),
		"storageclasses":         f.Storage().V1().StorageClasses().Informer(),
		"csinodes":               f.Storage().V1().CSINodes().Informer(),
		"csidrivers":             f.Storage().V1().CSIDrivers().Informer(),
		"csistoragecapacities":   f.Storage().V1().CSIStorageCapacities().Informer(),
		"volumeattachments":      f.Storage().V1().VolumeAttachments().Informer(),
		"resourceclaims":         f.Resource().V1().ResourceClaims().Informer(),
		"resourceslices":         f.Resource().V1().ResourceSlices().Informer(),
		"deviceclasses":          f.Resource().V1().DeviceClasses().Informer(),
		"devicetaintrules":       f.Resource().V1().DeviceTaintRules().Informer(),
	}
}

func TestSchedulerInformersSync(t *testing.T) {
	for _, mode := range []struct {
		name      string
		watchList bool
	}{{"watch-list", true}, {"list-watch", false}} {
		t.Run(mode.name, func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, mode.watchList)
			ts := servertest.StartDefault(t)
			for proto, cs := range clients(t, ts) {
				t.Run(proto, func(t *testing.T) {
					ctx, cancel := context.WithCancel(ctxT(t))
					defer cancel()
					seedCluster(t, ctx, cs)

					f := informers.NewSharedInformerFactory(cs, 0)
					podFactory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
						o.FieldSelector = "status.phase!=Succeeded,status.phase!=Failed"
					}))
					infs := schedulerInformers(f)
					infs["pods"] = podFactory.Core().V1().Pods().Informer()
					f.Start(ctx.Done())
					podFactory.Start(ctx.Done())

					syncCtx, syncCancel := context.WithTimeout(ctx, time.Second)
					defer syncCancel()
					for name, inf := range infs {
						if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
							t.Fatalf("informer %s did not sync within a second", name)
						}
					}
					if got := len(infs["nodes"].GetStore().List()); got != 3 {
						t.Errorf("nodes: got %d, want 3", got)
					}
					if got := len(infs["namespaces"].GetStore().List()); got != 4 {
						t.Errorf("namespaces: got %d, want 4", got)
					}
					if got := len(infs["pods"].GetStore().List()); got != 2 {
						t.Errorf("pods with status.phase!=Succeeded,Failed: got %d, want 2 (the finished one excluded)", got)
					}
				})
			}
			sawWatchList := false
			for _, r := range ts.Requests() {
				if strings.Contains(r.URI, "sendInitialEvents=true") {
					sawWatchList = true
				}
			}
			if sawWatchList != mode.watchList {
				t.Errorf("watch-list requests seen: %v, want %v", sawWatchList, mode.watchList)
			}
		})
	}
}

// seedCluster creates 3 nodes and 3 pods (one Succeeded) once per server.
func seedCluster(t *testing.T, ctx context.Context, cs kubernetes.Interface) {
	t.Helper()
	if l, _ := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); l != nil && len(l.Items) > 0 {
		return
	}
	for _, n := range []string{"n1", "n2", "n3"} {
		if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"a", "b", "done"} {
		pod, err := cs.CoreV1().Pods("default").Create(ctx, newPod(p), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p == "done" {
			pod.Status.Phase = corev1.PodSucceeded
			if _, err := cs.CoreV1().Pods("default").UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}
