package procquiet

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

func TestParseStatState(t *testing.T) {
	for _, tc := range []struct {
		line string
		want byte
	}{
		{"1234 (sleep) S 1 1234 1234 0 -1 4194304 90 0 0 0 0 0 0 0 20 0 1 0 100 2265088 131 18446744073709551615\n", 'S'},
		{"7 (a b) R 1 2 3\n", 'R'},
		{"8 (x) (y)) ) D 1 2\n", 'D'},   // comm "x) (y)) "
		{"9 ()) t 1\n", 't'},            // comm ")"
		{"10 (new\nline) I 2 0\n", 'I'}, // comm with a newline
		{"11 ((sd-pam)) Z 1 2 3", 'Z'},  // no trailing newline
		{"12 (kworker/0:1-events) I 2 0\n", 'I'},
	} {
		got, err := parseStatState([]byte(tc.line))
		if err != nil || got != tc.want {
			t.Errorf("parseStatState(%q) = %q, %v; want %q", tc.line, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "1 (x", "1 (x)", "1 (x) ", "1 (x)S 1", "1 (x) SS 1"} {
		if got, err := parseStatState([]byte(bad)); err == nil {
			t.Errorf("parseStatState(%q) = %q, nil; want an error", bad, got)
		}
	}
}

func TestParseSchedstat(t *testing.T) {
	rt, sw, err := parseSchedstat([]byte("2085140 359893 2\n"))
	if err != nil || rt != 2085140 || sw != 2 {
		t.Errorf("parseSchedstat = %d, %d, %v; want 2085140, 2, nil", rt, sw, err)
	}
	rt, sw, err = parseSchedstat([]byte("18446744073709551615 0 7"))
	if err != nil || rt != 1<<64-1 || sw != 7 {
		t.Errorf("parseSchedstat(max) = %d, %d, %v", rt, sw, err)
	}
	for _, bad := range []string{"", "1 2", "1  2 3", "a 2 3", "18446744073709551616 0 1", "-1 2 3"} {
		if _, _, err := parseSchedstat([]byte(bad)); err == nil {
			t.Errorf("parseSchedstat(%q): no error", bad)
		}
	}
}

// checkParse checks that parse, named name, reads want from good and
// rejects each of bad.
func checkParse[T comparable](t *testing.T, name string, parse func([]byte) (T, bool), good string, want T, bad ...string) {
	t.Helper()
	if got, ok := parse([]byte(good)); !ok || got != want {
		t.Errorf("%s(%q) = %v, %v; want %v", name, good, got, ok, want)
	}
	for _, b := range bad {
		if _, ok := parse([]byte(b)); ok {
			t.Errorf("%s(%q) ok", name, b)
		}
	}
}

func TestParseTID(t *testing.T) {
	checkParse(t, "parseTID", parseTID, "4194304", 4194304, ".", "..", "", "12a", "self")
}

// Lines as a little-endian kernel writes them.
const (
	tcpHeader = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"
	tcpLine   = "   3: 0100007F:A2C4 0100007F:1F90 01 00000000:0000012C 00:00000000 00000000  1000        0 34567 1 0000000000000000 20 4 30 10 -1"
	// ::ffff:127.0.0.1 port 8080 to ::ffff:10.1.2.3 port 41668.
	tcp6Mapped = "   0: 0000000000000000FFFF00000100007F:1F90 0000000000000000FFFF00000302010A:A2C4 01 00000000:00000000 00:00000000 00000000     0        0 98765 1 0000000000000000 20 4 30 10 -1"
	// ::1 port 443 to 2001:db8::1 port 50000, TIME_WAIT without inode.
	tcp6Native = "   1: 00000000000000000000000001000000:01BB B80D0120000000000000000001000000:C350 06 00000000:00000000 03:00001769 00000000     0        0 0 3 0000000000000000"
)

func TestParseTCPLine(t *testing.T) {
	le := binary.LittleEndian
	for _, tc := range []struct {
		line          string
		local, remote string
		inode         uint64
		state         uint8
		rx            uint64
	}{
		{tcpLine, "127.0.0.1:41668", "127.0.0.1:8080", 34567, tcpEstablished, 300},
		{tcp6Mapped, "127.0.0.1:8080", "10.1.2.3:41668", 98765, tcpEstablished, 0},
		{tcp6Native, "[::1]:443", "[2001:db8::1]:50000", 0, 6, 0},
	} {
		s, err := parseTCPLine([]byte(tc.line), le)
		if err != nil {
			t.Errorf("parseTCPLine(%q): %v", tc.line, err)
			continue
		}
		want := tcpSocket{netip.MustParseAddrPort(tc.local), netip.MustParseAddrPort(tc.remote), tc.inode, tc.state, tc.rx}
		if s != want {
			t.Errorf("parseTCPLine(%q) = %v; want %v", tc.line, s, want)
		}
		if s.local.Addr().Is4In6() || s.remote.Addr().Is4In6() {
			t.Errorf("parseTCPLine(%q): IPv4-mapped address left mapped", tc.line)
		}
	}
	for _, bad := range []string{tcpHeader, "", "0: 0100007F:1F90", "   3: 0100007G:A2C4 0100007F:1F90 01 0:0 0:0 0 0 0 1",
		"   3: 0100007F:A2C41 0100007F:1F90 01 0:0 0:0 0 0 0 1", "   3: 00007F:A2C4 0100007F:1F90 01 0:0 0:0 0 0 0 1",
		"   3: 0100007F:A2C4 0100007F:1F90 01 0:0 0:0 0 0 0 x"} {
		if s, err := parseTCPLine([]byte(bad), le); err == nil {
			t.Errorf("parseTCPLine(%q) = %v, nil; want an error", bad, s)
		}
	}
}

func TestParseHexAddrPortBigEndian(t *testing.T) {
	got, err := parseHexAddrPort([]byte("7F000001:0050"), binary.BigEndian)
	if want := netip.MustParseAddrPort("127.0.0.1:80"); err != nil || got != want {
		t.Errorf("big-endian 127.0.0.1:80 = %v, %v", got, err)
	}
}

func TestSocketInode(t *testing.T) {
	checkParse(t, "socketInode", socketInode, "socket:[12345]", 12345, "pipe:[12345]", "socket:[]", "socket:[12a]", "socket:[1", "/dev/null")
}

func TestSleeping(t *testing.T) {
	for _, s := range []byte("SIZX") {
		if !Sleeping(s) {
			t.Errorf("Sleeping(%q) = false", s)
		}
	}
	for _, s := range []byte("RDTtPWK?") {
		if Sleeping(s) {
			t.Errorf("Sleeping(%q) = true", s)
		}
	}
}

func TestQuietBetween(t *testing.T) {
	base := func() Threads {
		return Threads{PID: 10, List: []Thread{
			{TID: 10, State: 'S', RunTime: 5000, Switches: 3},
			{TID: 11, State: 'I', RunTime: 7000, Switches: 9},
			{TID: 12, State: 'Z', RunTime: 1, Switches: 1},
		}}
	}
	if !QuietBetween(base(), base()) {
		t.Fatal("identical sleeping snapshots not quiet")
	}
	for name, change := range map[string]func(*Threads){
		"runtime":    func(t *Threads) { t.List[1].RunTime++ },
		"switches":   func(t *Threads) { t.List[0].Switches++ },
		"running":    func(t *Threads) { t.List[0].State = 'R' },
		"disk":       func(t *Threads) { t.List[1].State = 'D' },
		"stopped":    func(t *Threads) { t.List[1].State = 'T' },
		"new thread": func(t *Threads) { t.List = append(t.List, Thread{TID: 13, State: 'S', Switches: 1}) },
		"exited":     func(t *Threads) { t.List = t.List[:2] },
		"replaced":   func(t *Threads) { t.List[2].TID = 14 },
		"vanished":   func(t *Threads) { t.Vanished = 1 },
		"other pid":  func(t *Threads) { t.PID = 11 },
	} {
		for _, second := range []bool{false, true} {
			a, b := base(), base()
			if second {
				change(&b)
			} else {
				change(&a)
			}
			if QuietBetween(a, b) {
				t.Errorf("%s (in snapshot %d): quiet", name, map[bool]int{false: 1, true: 2}[second])
			}
		}
	}
	zombie := Threads{PID: 10, List: []Thread{{TID: 10, State: 'Z'}}}
	quiet := base()
	if !zombie.exited() || quiet.exited() {
		t.Error("exited() wrong")
	}
	noInfo := Threads{PID: 10, List: []Thread{{TID: 10, State: 'S'}}}
	if !noInfo.schedInfoMissing() || quiet.schedInfoMissing() {
		t.Error("schedInfoMissing() wrong")
	}
}
