package engine

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// batsimPlatforms is where the platforms of Batsim 4.2.1's repository are
// extracted, if they are (the test using them is skipped otherwise).
// batsimPlatforms are Batsim 4.2.1's platforms, in ../shared/data.
const batsimPlatforms = batsimData + "/platforms"

// TestBatsimRepositoryPlatforms loads every platform of Batsim 4.2.1's
// repository with the master host it needs, and checks how many compute
// and storage resources a real Batsim 4.2.1 lists in its
// SIMULATION_BEGINS for each (their ids, names and properties are equal
// too: checked once against real runs). Batsim's own tests name no master
// host for any (test/conftest.py runs none of the cluster_locality
// platforms nor graphene.xml): cluster_locality_*.xml have a cabinet of
// one host, master_host0, for it (run with -m master_host0), and
// graphene.xml none (run with -m and any host; here its first,
// graphene-1001.nancy.grid5000.fr, which is then no resource). (Real
// Batsim 4.2.1 with SimGrid 3.32 stops at the <config> of graphene.xml and
// energy_platform_homogeneous_no_net.xml, whose network/TCP_gamma and
// network/coordinates SimGrid no longer knows; without it, it lists what
// the engine does.)
func TestBatsimRepositoryPlatforms(t *testing.T) {
	if _, err := os.Stat(batsimPlatforms); err != nil {
		t.Fatalf("Batsim 4.2.1's platforms: %v (../shared/data/batsim-4.2.1 beside the clone, as CI has it)", err)
	}
	want := map[string][2]int{
		"cluster512.xml": {512, 0}, "cluster512_pfs.xml": {512, 1}, "cluster_energy_128.xml": {128, 0},
		"cluster_locality_32x16.xml": {512, 0}, "cluster_locality_4x128.xml": {512, 0},
		"cluster_locality_8x16.xml": {128, 0}, "cluster_locality_8x64.xml": {512, 0},
		"energy_platform.xml": {4, 0}, "energy_platform_homogeneous.xml": {4, 0},
		"energy_platform_homogeneous_no_net.xml": {7, 0}, "energy_platform_homogeneous_no_net_1.xml": {1, 0},
		"energy_platform_homogeneous_no_net_128.xml": {128, 0}, "energy_platform_homogeneous_no_net_256.xml": {256, 0},
		"energy_platform_homogeneous_no_net_512.xml": {512, 0}, "graphene.xml": {143, 0},
		"properties_example.xml": {7, 0}, "simple_coalloc_platform.xml": {34, 0}, "small_platform.xml": {4, 0},
		"small_platform_pfs0.xml": {5, 0}, "small_platform_usage_replay.xml": {4, 0},
		"heterogeneous/platform.xml": {15, 0},
	}
	masters := map[string]string{
		"cluster_locality_32x16.xml": "master_host0", "cluster_locality_4x128.xml": "master_host0",
		"cluster_locality_8x16.xml": "master_host0", "cluster_locality_8x64.xml": "master_host0",
		"graphene.xml": "graphene-1001.nancy.grid5000.fr",
	}
	// How long after a job's end real Batsim 4.2.1's server hears of it,
	// by the first host of the job: the job's end and the server's
	// "has COMPLETED" in batsim.log, to the microsecond (small_platform.xml
	// with Batsim's test_delays.json, cluster512.xml with test_walltime.json,
	// Batkube's FIFO example deciding).
	noticed := map[string]map[string]float64{
		"small_platform.xml": {"Bourassa": 10.002015 - 10.000060, "Fafard": 13.002036 - 13.000060},
		"cluster512.xml":     {"a0": 1.004000 - 1.002400},
	}
	files, err := filepath.Glob(filepath.Join(batsimPlatforms, "*.xml"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(batsimPlatforms, "*", "*.xml"))
	files = append(files, more...)
	// ../shared/data holds 19 of the repository's 21 platforms (not
	// energy_platform_homogeneous_no_net_512.xml nor
	// heterogeneous/platform.xml, checked when Batsim's repository was).
	if len(files) < len(want)-2 {
		t.Errorf("found %d platforms in %s, want at least %d of Batsim 4.2.1's %d", len(files), batsimPlatforms, len(want)-2, len(want))
	}
	for _, path := range files {
		name, _ := filepath.Rel(batsimPlatforms, path)
		if _, ok := want[name]; !ok {
			t.Errorf("%s: not a platform of Batsim 4.2.1's repository", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			p, err := ReadPlatformFileWith(path, PlatformOptions{MasterHost: masters[name]})
			if err != nil {
				t.Fatal(err)
			}
			for host, delay := range noticed[name] {
				i := slices.IndexFunc(p.Resources, func(r Resource) bool { return r.Name == host })
				if i < 0 || math.Abs(p.Resources[i].Notice.Seconds()-delay) > 1e-6 {
					t.Errorf("host %q: a job's end is heard of %v s later (resource %d), real Batsim %.6f s", host, p.Resources[max(i, 0)].Notice.Seconds(), i, delay)
				}
			}
			if got := [2]int{len(p.Resources), len(p.Storage)}; got != want[name] {
				t.Errorf("%d compute and %d storage resources, want %d and %d", got[0], got[1], want[name][0], want[name][1])
			}
			if m := masters[name]; m != "" {
				if p.Master != m {
					t.Errorf("master %q, want %q", p.Master, m)
				}
				// Without -m, Batsim finds no master: it aborts.
				if _, err := ReadPlatformFile(path); err == nil || !strings.Contains(err.Error(), "no master host") {
					t.Errorf("without a master host: got %v, want an error saying there is none", err)
				}
			}
		})
	}
}

// describe renders resources as Batsim's SIMULATION_BEGINS lists them, with
// the speed and cores the engine simulates: "id name speed×cores
// properties | zone properties".
func describe(rs []Resource) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%d %s %g×%d %s | %s\n", r.ID, r.Name, r.Speed, r.Cores, props(r.Properties), props(r.ZoneProperties))
	}
	return b.String()
}

func props(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

// TestPlatformsAsBatsim reads the platforms of testdata/platforms and
// checks their resources: ids, names, properties and zone properties as
// real Batsim 4.2.1 lists them in SIMULATION_BEGINS (recorded from runs),
// speeds and cores as SimGrid reads them. Batsim numbers the compute
// resources, then the storage ones, in the order of SimGrid's
// Engine::get_all_hosts, by name, byte by byte: capitals first, node10
// before node9, g-10.lab before g-2.lab. A host's speed is that of its
// pstate (Fafard: its second, 50Mf); a cluster's are its first; a cabinet
// has one speed and one core. Every resource gets a role property, empty
// if it had none; a cluster's props are its zone's and each of its
// hosts'; zone properties merge from the outermost zone in, inner ones
// winning (d1's tier is 0: its own tier property is a host's, not a
// zone's).
func TestPlatformsAsBatsim(t *testing.T) {
	for _, c := range []struct {
		file, master    string
		compute, stores string
		wantMaster      string
	}{
		{"names.xml", "", `
0 Bourassa 9.8095e+07×4 memory=16Gi,role= | site=earth
1 Fafard 5e+07×1 role= | site=earth
2 Ginette 4.8492e+07×2 role=compute_node | site=earth
3 Jupiter 7.6296e+06×1 role= | site=earth
4 alpha 2e+09×1 role= | site=earth
5 node10 1e+09×1 role= | site=earth
6 node9 1e+09×1 role= | site=earth
`, `
7 Zeta 1e+09×1 role=storage | site=earth
8 attic 1e+09×1 role=storage | site=earth
`, "master_host"},
		// -m Jupiter: Jupiter is the master, master_host a compute node.
		{"names.xml", "Jupiter", `
0 Bourassa 9.8095e+07×4 memory=16Gi,role= | site=earth
1 Fafard 5e+07×1 role= | site=earth
2 Ginette 4.8492e+07×2 role=compute_node | site=earth
3 alpha 2e+09×1 role= | site=earth
4 master_host 1e+09×1 role= | site=earth
5 node10 1e+09×1 role= | site=earth
6 node9 1e+09×1 role= | site=earth
`, `
7 Zeta 1e+09×1 role=storage | site=earth
8 attic 1e+09×1 role=storage | site=earth
`, "Jupiter"},
		{"clusters.xml", "", `
0 c0 1e+09×1 role= | site=lyon
1 c1 1e+09×1 role= | site=lyon
2 c2 1e+09×1 role= | site=lyon
3 g-1.lab 2e+09×8 kind=gpu,role=,site=lyon-gpu | kind=gpu,site=lyon-gpu
4 g-10.lab 2e+09×8 kind=gpu,role=,site=lyon-gpu | kind=gpu,site=lyon-gpu
5 g-11.lab 2e+09×8 kind=gpu,role=,site=lyon-gpu | kind=gpu,site=lyon-gpu
6 g-2.lab 2e+09×8 kind=gpu,role=,site=lyon-gpu | kind=gpu,site=lyon-gpu
7 g-3.lab 2e+09×8 kind=gpu,role=,site=lyon-gpu | kind=gpu,site=lyon-gpu
8 g-4.lab 2e+09×8 kind=gpu,role=,site=lyon-gpu | kind=gpu,site=lyon-gpu
9 g-6.lab 2e+09×8 kind=gpu,role=,site=lyon-gpu | kind=gpu,site=lyon-gpu
10 g-9.lab 2e+09×8 kind=gpu,role=,site=lyon-gpu | kind=gpu,site=lyon-gpu
`, "", "boss0"},
		{"cabinets.xml", "ctl0", `
0 d1 1e+09×1 role=,tier=host | routing=dijkstra,site=grenoble,tier=0
1 f1 1e+09×1 role= | site=grenoble,tier=2
2 rack-a1.g5k 1.5e+09×1 role= | site=grenoble,tier=1
3 rack-a3.g5k 1.5e+09×1 role= | site=grenoble,tier=1
4 rack-b10.g5k 3e+09×1 role= | site=grenoble,tier=1
5 rack-b8.g5k 3e+09×1 role= | site=grenoble,tier=1
6 rack-b9.g5k 3e+09×1 role= | site=grenoble,tier=1
`, "", "ctl0"},
	} {
		t.Run(c.file+" -m "+c.master, func(t *testing.T) {
			p, err := ReadPlatformFileWith(filepath.Join("testdata", "platforms", c.file), PlatformOptions{MasterHost: c.master})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := describe(p.Resources), strings.TrimPrefix(c.compute, "\n"); got != want {
				t.Errorf("compute resources:\n%s\nwant:\n%s", got, want)
			}
			if got, want := describe(p.Storage), strings.TrimPrefix(c.stores, "\n"); got != want {
				t.Errorf("storage resources:\n%s\nwant:\n%s", got, want)
			}
			if p.Master != c.wantMaster {
				t.Errorf("master %q, want %q", p.Master, c.wantMaster)
			}
		})
	}
}

// TestMasterHostOption checks what Batsim 4.2.1 aborts on with -m
// (--master-host): no master at all, a master host with a role property
// (Batsim appends ",master" to it, and knows no such role), two masters
// (one named, one by role), a cabinet outside a zone routed as a cluster
// (SimGrid never builds it).
func TestMasterHostOption(t *testing.T) {
	for _, c := range []struct {
		file, master, want string
	}{
		{"cabinets.xml", "", `no master host: Batsim needs a host named master_host (its --master-host, -m)`},
		{"cabinets.xml", "nope", `no master host: Batsim needs a host named nope`},
		{"names.xml", "Ginette", `host "Ginette" has the role "compute_node": Batsim would make it "compute_node,master"`},
		{"names.xml", "Zeta", `host "Zeta" has the role "storage": Batsim would make it "storage,master"`},
		{"clusters.xml", "c0", `two master hosts`},
	} {
		if _, err := ReadPlatformFileWith(filepath.Join("testdata", "platforms", c.file), PlatformOptions{MasterHost: c.master}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s -m %q: got %v, want an error containing %q", c.file, c.master, err, c.want)
		}
	}
	_, err := ParsePlatform(strings.NewReader(`<platform version="4.1"><zone id="z" routing="Full">
		<host id="master_host" speed="1Gf"/><cabinet id="c" prefix="x" suffix="" speed="1Gf" bw="1Gbps" lat="0" radical="0-1"/>
		</zone></platform>`))
	if err == nil || !strings.Contains(err.Error(), `only builds the cabinets of zones routed as a Cluster`) {
		t.Errorf("a cabinet in a Full zone: got %v, want an error", err)
	}
}
