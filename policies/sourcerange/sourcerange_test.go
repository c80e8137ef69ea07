package sourcerange

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

const wantForbidden = "Forbidden: your address may not use this route\n"

func TestServe(t *testing.T) {
	tests := []struct {
		name        string
		allow, deny []string
		client      string // "" for the zero Addr
		method      string // GET when empty
		wantNext    bool
	}{
		{name: "no lists pass everyone", client: "192.0.2.1", wantNext: true},
		{name: "no lists pass an unknown client", client: "", wantNext: true},
		{name: "empty non-nil lists pass everyone", allow: []string{}, deny: []string{}, client: "192.0.2.1", wantNext: true},
		{name: "allow-only in", allow: []string{"10.0.0.0/8"}, client: "10.1.2.3", wantNext: true},
		{name: "allow-only out", allow: []string{"10.0.0.0/8"}, client: "192.0.2.1"},
		{name: "allow-only IPv4-mapped client", allow: []string{"10.0.0.0/8"}, client: "::ffff:10.1.2.3", wantNext: true},
		{name: "allow-only IPv4 list refuses IPv6", allow: []string{"10.0.0.0/8"}, client: "::a01:203"},
		{name: "allow-only IPv6 in", allow: []string{"2001:db8::/32"}, client: "2001:db8::1", wantNext: true},
		{name: "allow-only IPv6 out", allow: []string{"2001:db8::/32"}, client: "2001:db9::1"},
		{name: "deny-only in", deny: []string{"192.0.2.0/24"}, client: "192.0.2.1"},
		{name: "deny-only out", deny: []string{"192.0.2.0/24"}, client: "198.51.100.1", wantNext: true},
		{name: "deny-only IPv6 in", deny: []string{"2001:db8::/32"}, client: "2001:db8::1"},
		{name: "deny beats allow", allow: []string{"10.0.0.0/8"}, deny: []string{"10.1.0.0/16"}, client: "10.1.2.3"},
		{name: "deny beats allow of the same address", allow: []string{"10.0.0.1"}, deny: []string{"10.0.0.1"}, client: "10.0.0.1"},
		{name: "allowed and not denied", allow: []string{"10.0.0.0/8"}, deny: []string{"10.1.0.0/16"}, client: "10.2.0.1", wantNext: true},
		{name: "neither allowed nor denied", allow: []string{"10.0.0.0/8"}, deny: []string{"10.1.0.0/16"}, client: "192.0.2.1"},
		{name: "unknown client with an allow list", allow: []string{"0.0.0.0/0", "::/0"}, client: ""},
		{name: "unknown client with a deny list", deny: []string{"192.0.2.0/24"}, client: ""},
		{name: "HEAD refused", allow: []string{"10.0.0.0/8"}, client: "192.0.2.1", method: http.MethodHead},
		{name: "HEAD passed", allow: []string{"10.0.0.0/8"}, client: "10.0.0.1", method: http.MethodHead, wantNext: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called := false
			next := exchange.HandlerFunc(func(w http.ResponseWriter, x *exchange.Request) {
				called = true
				w.WriteHeader(http.StatusNoContent)
			})
			h, err := New(tt.allow, tt.deny, next)
			if err != nil {
				t.Fatalf("New error = %v, want none", err)
			}
			method := tt.method
			if method == "" {
				method = http.MethodGet
			}
			x := &exchange.Request{HTTP: httptest.NewRequest(method, "/", nil)}
			if tt.client != "" {
				x.ClientIP = netip.MustParseAddr(tt.client)
			}
			w := httptest.NewRecorder()
			h.Serve(w, x)
			if called != tt.wantNext {
				t.Fatalf("next called = %v, want %v", called, tt.wantNext)
			}
			if called {
				if w.Code != http.StatusNoContent {
					t.Errorf("status = %d, want next's %d", w.Code, http.StatusNoContent)
				}
				return
			}
			checkForbidden(t, w, method)
		})
	}
}

func checkForbidden(t *testing.T, w *httptest.ResponseRecorder, method string) {
	t.Helper()
	if w.Code != http.StatusForbidden {
		t.Errorf("status = %d, want %d", w.Code, http.StatusForbidden)
	}
	if got, want := w.Header().Get("Content-Type"), "text/plain; charset=utf-8"; got != want {
		t.Errorf("Content-Type = %q, want %q", got, want)
	}
	want := wantForbidden
	if method == http.MethodHead {
		want = ""
	}
	if got := w.Body.String(); got != want {
		t.Errorf("body = %q, want %q", got, want)
	}
}

// TestServeUsesClientIP checks that the decision is made on x.ClientIP and
// never on the connection's address (RemoteAddr or Peer).
func TestServeUsesClientIP(t *testing.T) {
	tests := []struct {
		name       string
		remoteAddr string
		clientIP   string
		wantNext   bool
	}{
		{name: "allowed peer, refused client", remoteAddr: "10.0.0.1:4321", clientIP: "192.0.2.1"},
		{name: "refused peer, allowed client", remoteAddr: "192.0.2.1:4321", clientIP: "10.0.0.2", wantNext: true},
		{name: "denied peer, allowed client", remoteAddr: "10.9.0.1:4321", clientIP: "10.0.0.2", wantNext: true},
		{name: "allowed peer, denied client", remoteAddr: "10.0.0.2:4321", clientIP: "10.9.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called := false
			next := exchange.HandlerFunc(func(w http.ResponseWriter, x *exchange.Request) { called = true })
			h, err := New([]string{"10.0.0.0/8"}, []string{"10.9.0.0/16"}, next)
			if err != nil {
				t.Fatalf("New error = %v, want none", err)
			}
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tt.remoteAddr
			r.Header.Set("X-Forwarded-For", tt.remoteAddr[:strings.IndexByte(tt.remoteAddr, ':')])
			peer := netip.MustParseAddrPort(tt.remoteAddr).Addr()
			x := &exchange.Request{HTTP: r, Peer: peer, PeerTrusted: true, ClientIP: netip.MustParseAddr(tt.clientIP)}
			w := httptest.NewRecorder()
			h.Serve(w, x)
			if called != tt.wantNext {
				t.Errorf("next called = %v, want %v", called, tt.wantNext)
			}
			if !called && w.Code != http.StatusForbidden {
				t.Errorf("status = %d, want %d", w.Code, http.StatusForbidden)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	next := exchange.HandlerFunc(func(http.ResponseWriter, *exchange.Request) {})
	tests := []struct {
		name        string
		allow, deny []string
		next        exchange.Handler
		want        string
	}{
		{name: "bad allow entry", allow: []string{"10.0.0.0/8", "10.0.0.0/40"}, next: next,
			want: `allow: entry 1: "10.0.0.0/40" is not a CIDR`},
		{name: "bad deny entry", allow: []string{"10.0.0.0/8"}, deny: []string{"nope"}, next: next,
			want: `deny: entry 0: "nope" is neither an address nor a CIDR`},
		{name: "no next", allow: []string{"10.0.0.0/8"},
			want: "next handler is nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := New(tt.allow, tt.deny, tt.next)
			if err == nil {
				t.Fatalf("New = %v, nil; want error %q", h, tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error = %q, want %q", got, tt.want)
			}
		})
	}
}

// nopWriter is a ResponseWriter that keeps nothing, so that allocation
// counts are the handler's own.
type nopWriter struct{ h http.Header }

func (w nopWriter) Header() http.Header         { return w.h }
func (w nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w nopWriter) WriteHeader(int)             {}

func TestServeAllocations(t *testing.T) {
	next := exchange.HandlerFunc(func(http.ResponseWriter, *exchange.Request) {})
	h, err := New([]string{"10.0.0.0/8", "2001:db8::/32"}, []string{"10.9.0.0/16"}, next)
	if err != nil {
		t.Fatalf("New error = %v", err)
	}
	tests := []struct {
		name   string
		client string
		want   float64
	}{
		{name: "allowed IPv4", client: "10.0.0.1", want: 0},
		{name: "allowed IPv6", client: "2001:db8::1", want: 0},
		// Refusing sets Content-Type: net/http's Header.Set allocates its
		// one-value slice. Nothing else may.
		{name: "refused", client: "192.0.2.1", want: 1},
		{name: "denied", client: "10.9.0.1", want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := &exchange.Request{HTTP: httptest.NewRequest(http.MethodGet, "/", nil), ClientIP: netip.MustParseAddr(tt.client)}
			w := nopWriter{h: http.Header{}}
			if got := testing.AllocsPerRun(1000, func() { h.Serve(w, x) }); got != tt.want {
				t.Errorf("allocations per Serve = %v, want %v", got, tt.want)
			}
		})
	}
}
