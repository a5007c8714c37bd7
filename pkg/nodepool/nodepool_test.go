package nodepool_test

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/batkube/batkube/pkg/nodepool"
	"github.com/batkube/batkube/pkg/translate"
)

func host(id int, name, it, cores, price string) translate.Host {
	p := map[string]string{"pool": "cloud", "instance_type": it, "core": cores, "memory": "16Gi"}
	if price != "" {
		p["price"] = price
	}
	return translate.Host{ID: id, Name: name, Properties: p}
}

func pool(t *testing.T, hosts ...translate.Host) *nodepool.Pool {
	t.Helper()
	var ph []nodepool.Host
	for _, h := range hosts {
		x, err := nodepool.FromHost(h, translate.NodeOptions{DefaultCPU: resource.MustParse("1"), DefaultMemory: resource.MustParse("1Gi")})
		if err != nil {
			t.Fatal(err)
		}
		ph = append(ph, x)
	}
	p, err := nodepool.New(ph)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPoolTakesTheLowestFreeHostOfAType: nodes take the free host of their
// type with the lowest id, none when the type is exhausted, and a released
// host is taken again.
func TestPoolTakesTheLowestFreeHostOfAType(t *testing.T) {
	p := pool(t, host(5, "b1", "big", "16", "2"), host(3, "s1", "small", "4", "0.5"), host(4, "s2", "small", "4", "0.5"))
	if h, ok := p.Take("small", "n1"); !ok || h.ID != 3 {
		t.Fatalf("first small: %+v %t, want host 3", h, ok)
	}
	if h, ok := p.Take("small", "n2"); !ok || h.ID != 4 {
		t.Fatalf("second small: %+v %t, want host 4", h, ok)
	}
	if _, ok := p.Take("small", "n3"); ok || p.Free("small") != 0 || p.InUse() != 2 {
		t.Fatalf("a third small was mapped (free %d, in use %d), want none", p.Free("small"), p.InUse())
	}
	if h, ok := p.Release("n1"); !ok || h.ID != 3 {
		t.Fatalf("release n1: %+v %t, want host 3", h, ok)
	}
	if h, ok := p.Take("small", "n4"); !ok || h.ID != 3 {
		t.Fatalf("after release: %+v %t, want host 3 again", h, ok)
	}
	if _, ok := p.Take("medium", "n5"); ok || p.Known("medium") || !p.Known("big") {
		t.Fatal("an unknown instance type was mapped")
	}
}

// TestInstanceTypesOfThePool: one instance type per distinct type, with
// its hosts' resources and price, in the KWOK provider's file format.
func TestInstanceTypesOfThePool(t *testing.T) {
	p := pool(t, host(1, "s1", "small", "4", "0.5"), host(2, "s2", "small", "4", "0.5"), host(3, "b1", "big", "16", ""))
	its := p.InstanceTypes()
	if len(its) != 2 || its[0].Name != "big" || its[1].Name != "small" {
		t.Fatalf("instance types %+v, want big and small", its)
	}
	if cpu := its[1].Resources["cpu"]; cpu.String() != "4" || its[1].Offerings[0].Price != 0.5 || its[0].Offerings[0].Price != 0 {
		t.Errorf("small: cpu %s, price %g; big: price %g; want 4, 0.5, 0", cpu.String(), its[1].Offerings[0].Price, its[0].Offerings[0].Price)
	}
	b, err := json.Marshal(its)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"name":"small"`, `"Price":0.5`, `"Available":true`, `"key":"karpenter.sh/capacity-type"`, `"memory":"16Gi"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the file %s lacks %s", b, want)
		}
	}
}

// TestPoolHostsNeedAnInstanceType: a pool host without instance_type, with
// a bad price, or two hosts of one type that differ, are refused.
func TestPoolHostsNeedAnInstanceType(t *testing.T) {
	opts := translate.NodeOptions{DefaultCPU: resource.MustParse("1"), DefaultMemory: resource.MustParse("1Gi")}
	if _, err := nodepool.FromHost(translate.Host{Name: "x", Properties: map[string]string{"pool": "c"}}, opts); err == nil {
		t.Error("a pool host without instance_type was accepted")
	}
	if _, err := nodepool.FromHost(host(1, "x", "s", "4", "cheap"), opts); err == nil {
		t.Error("a price that is no number was accepted")
	}
	a, _ := nodepool.FromHost(host(1, "a", "s", "4", "1"), opts)
	b, _ := nodepool.FromHost(host(2, "b", "s", "8", "1"), opts)
	if _, err := nodepool.New([]nodepool.Host{a, b}); err == nil {
		t.Error("two hosts of one instance type with different cores were accepted")
	}
}

// TestSleepPstatesOfAPoolHost: Batsim's sleep_pstates property gives the
// pstate a free pool host sleeps in (the first triplet's); a malformed one,
// or one that sleeps in the compute pstate 0, is refused.
func TestSleepPstatesOfAPoolHost(t *testing.T) {
	opts := translate.NodeOptions{DefaultCPU: resource.MustParse("1"), DefaultMemory: resource.MustParse("1Gi")}
	for v, want := range map[string]string{"": "", "1:2:3": "1", " 3:4:5, 6:7:8": "3"} {
		h := host(1, "a", "s", "4", "1")
		if v != "" {
			h.Properties["sleep_pstates"] = v
		}
		got, err := nodepool.FromHost(h, opts)
		if err != nil || got.SleepPstate != want {
			t.Errorf("sleep_pstates %q: sleep pstate %q, %v; want %q", v, got.SleepPstate, err, want)
		}
	}
	for _, v := range []string{"1:2", "1:2:x", "1:2:3,4", "0:1:2", "-1:2:3"} {
		h := host(1, "a", "s", "4", "1")
		h.Properties["sleep_pstates"] = v
		if _, err := nodepool.FromHost(h, opts); err == nil || !strings.Contains(err.Error(), "sleep_pstates") {
			t.Errorf("sleep_pstates %q: error %v, want one naming the property", v, err)
		}
	}
}
