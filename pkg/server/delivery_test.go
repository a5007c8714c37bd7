package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/server"
)

// Unsent and PeersUnread follow what the server writes to a client that
// does not read (a watch's client, stalled): the watch's event is
// received by the client's socket (none unsent) and unread there, then
// none once the client read it; a new event counts again, although the
// connection was found all read before (the server asks again about a
// connection written to since).
func TestUnsentAndPeersUnreadFollowTheWrites(t *testing.T) {
	srv, err := server.New(server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, l) }()
	defer func() { cancel(); <-served }()
	base := "http://" + l.Addr().String()

	watch, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	fmt.Fprintf(watch, "GET /api/v1/namespaces/default/configmaps?watch=true HTTP/1.1\r\nHost: x\r\n\r\n")
	r := bufio.NewReader(watch)
	resp, err := http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("watch: %v %v", resp, err)
	}

	unread := func() int {
		t.Helper()
		n, err := srv.PeersUnread()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	create := func(name string) {
		t.Helper()
		body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"}}`
		resp, err := http.Post(base+"/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("creating %s: %s", name, resp.Status)
		}
	}
	// What the watch's headers left in the client's socket, read.
	drain := func() {
		t.Helper()
		for r.Buffered() > 0 || unread() > 0 {
			if _, err := r.ReadByte(); err != nil {
				t.Fatal(err)
			}
		}
	}
	drain()
	for i := range 3 {
		create(fmt.Sprintf("cm-%d", i))
		deadline := time.Now().Add(10 * time.Second)
		for unread() == 0 { // written, then received in the kernel's time
			if time.Now().After(deadline) {
				t.Fatalf("event %d: never seen unread by the client", i)
			}
		}
		for {
			n, err := srv.Unsent()
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
		}
		if n := unread(); n == 0 {
			t.Fatalf("event %d: received by the client, none unread", i)
		}
		drain()
		if n := unread(); n != 0 {
			t.Fatalf("event %d: all read, %d unread", i, n)
		}
	}
}
