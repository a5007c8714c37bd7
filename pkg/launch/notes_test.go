package launch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlatformNotesAreToldFirst: a platform real Batsim would abort on
// (hosts with no route to the master host) is said so before the run.
func TestPlatformNotesAreToldFirst(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.xml")
	if err := os.WriteFile(path, []byte(`<platform version="4.1"><zone id="root" routing="Full">
  <zone id="m" routing="Full"><host id="master_host" speed="1Gf"/></zone>
  <zone id="n" routing="Full"><host id="h0" speed="1Gf"/></zone>
</zone></platform>`), 0o644); err != nil {
		t.Fatal(err)
	}
	var told []string
	r := &run{cfg: Config{Platform: path, Logf: func(format string, args ...any) { told = append(told, fmt.Sprintf(format, args...)) }}}
	r.tellPlatformNotes()
	if len(told) != 1 || !strings.Contains(told[0], "1 host(s) have no route to the master host") {
		t.Errorf("told %q, want the hosts with no route", told)
	}
	told = nil
	r.cfg.Platform = "../../examples/platforms/platform_4.xml"
	r.tellPlatformNotes()
	if len(told) != 0 {
		t.Errorf("platform_4.xml: told %q, want nothing", told)
	}
}
