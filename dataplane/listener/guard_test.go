package listener

import (
	"crypto/tls"
	"io"
	"net"
	"testing"
)

// TestUnread checks that bytes given back are read first, and that the
// guard, which followed them once, does not count them again.
func TestUnread(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	g := NewGuard(server, Limits{})
	defer g.Close()
	go io.WriteString(client, get+postCL)
	buf := make([]byte, len(get)+len(postCL))
	if _, err := io.ReadFull(g, buf); err != nil {
		t.Fatal(err)
	}
	// A reader that served the first request gives back the second.
	g.Unread(buf[len(get)+3:])
	g.Unread(buf[len(get) : len(get)+3])
	again := make([]byte, len(postCL))
	if _, err := io.ReadFull(g, again); err != nil {
		t.Fatal(err)
	}
	if string(again) != postCL {
		t.Fatalf("read back %q, want %q", again, postCL)
	}
	for i := range 3 { // two requests and the next: all unambiguous
		if err := g.Verdict(); err != nil {
			t.Errorf("verdict %d: %v", i, err)
		}
	}
	if n := g.t.next; n != 2 {
		t.Errorf("guard followed %d requests, want 2 (given-back bytes counted once)", n)
	}
}

func TestCarriesHTTP1(t *testing.T) {
	c, _ := net.Pipe()
	defer c.Close()
	g := NewGuard(c, Limits{})
	for _, tt := range []struct {
		conn net.Conn
		want bool
	}{{g, true}, {tlsGuard{g}, true}, {c, false}, {tls.Server(c, &tls.Config{}), false}} {
		if got := CarriesHTTP1(tt.conn); got != tt.want {
			t.Errorf("CarriesHTTP1(%T) = %v, want %v", tt.conn, got, tt.want)
		}
	}
}
