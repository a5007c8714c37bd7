package engine

import (
	"maps"
	"strconv"
	"strings"
	"testing"
)

const testPlatform = `<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <config id="General"><prop id="maxmin/precision" value="1e-9"/></config>
  <zone id="root" routing="Full">
    <prop id="site" value="nancy"/>
    <prop id="rack" value="r0"/>
    <zone id="nodes" routing="Full">
    <host id="master_host" speed="100Mf"/>
    <host id="node10" speed="1Gf" core="4">
      <prop id="memory" value="16Gi"/>
      <disk id="d" read_bw="1GBps" write_bw="1GBps" size="1TB"><prop id="mount" value="/"/></disk>
    </host>
    <host id="node2" speed="2.5e9f,1e9f" core="8" pstate="1">
      <prop id="memory" value="32Gi"/>
      <prop id="label:disktype" value="ssd"/>
    </host>
    </zone>
    <zone id="gpu" routing="Full">
      <prop id="rack" value="r1"/>
      <host id="gpu0" speed="3gigaflops">
        <prop id="nvidia.com/gpu" value="2"/>
      </host>
    </zone>
    <AS id="old" routing="Full">
      <host id="storage0" speed="1Mf"><prop id="role" value="storage"/></host>
    </AS>
    <cluster id="c" prefix="c-" suffix=".lan" radical="0-1,5" speed="1kf" core="2" bw="125MBps" lat="50us">
      <prop id="rack" value="r2"/>
    </cluster>
    <link id="l" bandwidth="1GBps" latency="0"/>
  </zone>
</platform>`

func TestParsePlatform(t *testing.T) {
	p, err := ParsePlatform(strings.NewReader(testPlatform))
	if err != nil {
		t.Fatal(err)
	}
	if p.Master != "master_host" {
		t.Errorf("got master %q, want master_host", p.Master)
	}
	want := []Resource{
		{ID: 0, Name: "c-0.lan", Speed: 1e3, Cores: 2, Properties: map[string]string{"role": "", "rack": "r2"}, ZoneProperties: map[string]string{"site": "nancy", "rack": "r2"}},
		{ID: 1, Name: "c-1.lan", Speed: 1e3, Cores: 2, Properties: map[string]string{"role": "", "rack": "r2"}, ZoneProperties: map[string]string{"site": "nancy", "rack": "r2"}},
		{ID: 2, Name: "c-5.lan", Speed: 1e3, Cores: 2, Properties: map[string]string{"role": "", "rack": "r2"}, ZoneProperties: map[string]string{"site": "nancy", "rack": "r2"}},
		{ID: 3, Name: "gpu0", Speed: 3e9, Cores: 1, Properties: map[string]string{"role": "", "nvidia.com/gpu": "2"}, ZoneProperties: map[string]string{"site": "nancy", "rack": "r1"}},
		{ID: 4, Name: "node10", Speed: 1e9, Cores: 4, Properties: map[string]string{"role": "", "memory": "16Gi"}, ZoneProperties: map[string]string{"site": "nancy", "rack": "r0"}},
		{ID: 5, Name: "node2", Speed: 1e9, Cores: 8, Properties: map[string]string{"role": "", "memory": "32Gi", "label:disktype": "ssd"}, ZoneProperties: map[string]string{"site": "nancy", "rack": "r0"}},
	}
	if len(p.Resources) != len(want) {
		t.Fatalf("got %d resources, want %d: %+v", len(p.Resources), len(want), p.Resources)
	}
	for i, w := range want {
		t.Run(w.Name, func(t *testing.T) {
			g := p.Resources[i]
			if g.ID != w.ID || g.Name != w.Name || g.Speed != w.Speed || g.Cores != w.Cores {
				t.Errorf("got %d %s speed %g cores %d, want %d %s speed %g cores %d", g.ID, g.Name, g.Speed, g.Cores, w.ID, w.Name, w.Speed, w.Cores)
			}
			if !maps.Equal(g.Properties, w.Properties) {
				t.Errorf("got properties %v, want %v", g.Properties, w.Properties)
			}
			if !maps.Equal(g.ZoneProperties, w.ZoneProperties) {
				t.Errorf("got zone properties %v, want %v", g.ZoneProperties, w.ZoneProperties)
			}
		})
	}
	if len(p.Storage) != 1 || p.Storage[0].Name != "storage0" || p.Storage[0].ID != 6 {
		t.Errorf("got storage %+v, want storage0 with id 6", p.Storage)
	}
}

func TestParsePlatformErrors(t *testing.T) {
	wrap := func(body string) string {
		return `<platform version="4.1"><zone id="z" routing="Full">` + body + `</zone></platform>`
	}
	master := `<host id="m" speed="1f"><prop id="role" value="master"/></host>`
	tests := []struct {
		name, xml, want string
	}{
		{"not XML", "{}", "no <platform> element"},
		{"wrong root", `<zone id="z" routing="Full"/>`, "the root element is <zone>"},
		{"no master", wrap(`<host id="a" speed="1Gf"/>`), "no master host"},
		{"two masters", wrap(master + `<host id="master_host" speed="1f"/>`), `two master hosts: "m" and "master_host"`},
		{"unknown unit", wrap(master + `<host id="a" speed="1Gb"/>`), `host "a": speed "1Gb": unknown unit "Gb"`},
		{"no speed", wrap(master + `<host id="a"/>`), `host "a": no speed attribute`},
		{"zero speed", wrap(master + `<host id="a" speed="0f"/>`), `host "a" is a compute node but its speed is not positive`},
		{"bad pstate", wrap(master + `<host id="a" speed="1f,2f" pstate="2"/>`), `pstate "2"`},
		{"bad core", wrap(master + `<host id="a" speed="1f" core="0"/>`), `core "0"`},
		{"duplicate host", wrap(master + `<host id="a" speed="1f"/><host id="a" speed="1f"/>`), `host "a" is declared twice`},
		{"master_host with a role", wrap(`<host id="master_host" speed="1f"><prop id="role" value="master"/></host>`), `Batsim would make it "master,master"`},
		{"master_host with an empty role", wrap(`<host id="master_host" speed="1f"><prop id="role" value=""/></host>`), `Batsim would make it ",master"`},
		{"unknown role", wrap(master + `<host id="a" speed="1f"><prop id="role" value="boss"/></host>`), `unknown role "boss"`},
		{"host outside zones", `<platform version="4.1"><host id="a" speed="1f"/></platform>`, `host "a" is outside of any zone`},
		{"hosts beside a zone", wrap(master + `<zone id="inner" routing="Full"><host id="a" speed="1f"/></zone>`), `zone "z" holds both hosts and zones (at zone "inner"), which SimGrid refuses`},
		{"a cluster beside hosts", wrap(master + `<cluster id="c" prefix="n" suffix="" radical="0-1" speed="1f" bw="1Bps" lat="0"/>`), `zone "z" holds both hosts and zones (at cluster "c")`},
		{"huge cluster", wrap(`<zone id="mz" routing="Full">` + master + `</zone><cluster id="c" prefix="n" suffix="" radical="0-99999999" speed="1f" bw="1Bps" lat="0"/>`), "more than"},
		{"bad radical", wrap(`<zone id="mz" routing="Full">` + master + `</zone><cluster id="c" prefix="n" suffix="" radical="1-2-3" speed="1f" bw="1Bps" lat="0"/>`), "malformed group"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePlatform(strings.NewReader(tc.xml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestMasterHostIsNotAResource checks that the master host, named
// master_host or with the role master, is neither a compute nor a storage
// resource and takes no id, and that a <cluster>'s role property makes its
// hosts storage resources.
func TestMasterHostIsNotAResource(t *testing.T) {
	tests := []struct {
		name, master string
	}{
		{"by name", `<host id="master_host" speed="1Gf"/>`},
		{"by role", `<host id="boss" speed="1Gf"><prop id="role" value="master"/></host>`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePlatform(strings.NewReader(`<platform version="4.1"><zone id="z" routing="Full">
				<zone id="hosts" routing="Full"><host id="b" speed="1Gf"/>` + tc.master + `<host id="a" speed="1Gf"><prop id="role" value="compute_node"/></host></zone>
				<cluster id="disks" prefix="disk" suffix="" radical="0-1" speed="1Mf" bw="1GBps" lat="0"><prop id="role" value="storage"/></cluster>
			</zone></platform>`))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, r := range append(p.Resources, p.Storage...) {
				names = append(names, strconv.Itoa(r.ID)+"="+r.Name+"/"+r.Properties["role"])
			}
			want := "0=a/compute_node 1=b/ 2=disk0/storage 3=disk1/storage"
			if got := strings.Join(names, " "); got != want || len(p.Resources) != 2 {
				t.Errorf("got resources %s (%d compute), want %s (2 compute)", got, len(p.Resources), want)
			}
			if wantMaster := map[string]string{"by name": "master_host", "by role": "boss"}[tc.name]; p.Master != wantMaster {
				t.Errorf("got master %q, want %q", p.Master, wantMaster)
			}
		})
	}
}

func TestParseSpeeds(t *testing.T) {
	tests := []struct {
		in   string
		want []float64
	}{
		{"1Gf", []float64{1e9}},
		{"100Mf", []float64{1e8}},
		{"1.5e9f", []float64{1.5e9}},
		{"16.673E9f", []float64{16.673e9}},
		{"1Gf, 0.5Gf", []float64{1e9, 0.5e9}},
		{"2kiloflops", []float64{2e3}},
		{" 1Gf ,2Mf ", []float64{1e9, 2e6}},
		{"1exaflops", []float64{1e18}},
		{"1Ef", []float64{1e18}},
		{"42", []float64{42}},
		{"3flops", []float64{3}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseSpeeds(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
	// SimGrid wants the unit right after the number: "unknown unit:
	// kiloflops".
	for _, bad := range []string{"", "f", "1Gb", "-1f", "1e999f", "Gf1", "2 kiloflops", "1 Gf"} {
		if _, err := parseSpeeds(bad); err == nil {
			t.Errorf("parseSpeeds(%q): got no error", bad)
		}
	}
}

func TestExamplePlatforms(t *testing.T) {
	tests := []struct {
		file      string
		resources int
	}{
		{"platform_4.xml", 4},
		{"platform_16.xml", 16},
		{"heterogeneous.xml", 6},
		{"platform_1000.xml", 1000},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			p, err := ReadPlatformFile("../../examples/platforms/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Resources) != tc.resources {
				t.Errorf("got %d compute resources, want %d", len(p.Resources), tc.resources)
			}
			for _, r := range p.Resources {
				if r.Properties["memory"] == "" || (r.Properties["core"] == "" && r.Properties["cpu"] == "") {
					t.Errorf("resource %s: got properties %v, want memory and core", r.Name, r.Properties)
				}
			}
		})
	}
}
