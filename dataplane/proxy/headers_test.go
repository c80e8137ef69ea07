package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

func TestRemoveHopHeaders(t *testing.T) {
	tests := []struct {
		name string
		in   http.Header
		want http.Header
	}{
		{name: "every hop header", in: http.Header{
			"Connection": {"close"}, "Proxy-Connection": {"keep-alive"}, "Keep-Alive": {"timeout=5"},
			"Proxy-Authenticate": {"Basic"}, "Proxy-Authorization": {"Basic x"}, "Te": {"trailers"},
			"Trailer": {"X-T"}, "Transfer-Encoding": {"chunked"}, "Upgrade": {"websocket"},
			"X-Keep": {"1"},
		}, want: http.Header{"X-Keep": {"1"}}},
		{name: "names listed in Connection", in: http.Header{
			"Connection": {"X-A, x-b"}, "X-A": {"1"}, "X-B": {"2"}, "X-C": {"3"},
		}, want: http.Header{"X-C": {"3"}}},
		{name: "several Connection headers", in: http.Header{
			"Connection": {"X-A", "keep-alive, X-B"}, "X-A": {"1"}, "X-B": {"2"}, "Keep-Alive": {"x"}, "X-C": {"3"},
		}, want: http.Header{"X-C": {"3"}}},
		{name: "case-insensitive and spaced names", in: http.Header{
			"Connection": {"  x-FORWARDED-for ,, ,X-Custom-Thing  "}, "X-Forwarded-For": {"1.2.3.4"}, "X-Custom-Thing": {"a"}, "Cookie": {"a=1"},
		}, want: http.Header{"Cookie": {"a=1"}}},
		{name: "close and a Close field", in: http.Header{"Connection": {"close"}, "Close": {"x"}, "X-A": {"1"}},
			want: http.Header{"X-A": {"1"}}},
		{name: "Connection naming itself", in: http.Header{"Connection": {"Connection, X-A"}, "X-A": {"1"}, "X-B": {"2"}},
			want: http.Header{"X-B": {"2"}}},
		{name: "nothing to remove", in: http.Header{"Accept": {"*/*"}}, want: http.Header{"Accept": {"*/*"}}},
		{name: "empty", in: http.Header{}, want: http.Header{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.in.Clone()
			removeHopHeaders(h)
			if !reflect.DeepEqual(h, tt.want) {
				t.Errorf("removeHopHeaders(%v) left %v, want %v", tt.in, h, tt.want)
			}
		})
	}
}

func TestUpgradeType(t *testing.T) {
	tests := []struct {
		name string
		h    http.Header
		want string
	}{
		{name: "websocket", h: http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}}, want: "websocket"},
		{name: "token among others", h: http.Header{"Connection": {"keep-alive, upgrade"}, "Upgrade": {"h2c"}}, want: "h2c"},
		{name: "token in a second Connection line", h: http.Header{"Connection": {"keep-alive", "UPGRADE"}, "Upgrade": {"foo/2"}}, want: "foo/2"},
		{name: "Upgrade without Connection", h: http.Header{"Upgrade": {"websocket"}}, want: ""},
		{name: "Connection without upgrade token", h: http.Header{"Connection": {"keep-alive, upgrades"}, "Upgrade": {"websocket"}}, want: ""},
		{name: "Connection upgrade without Upgrade", h: http.Header{"Connection": {"upgrade"}}, want: ""},
		{name: "nothing", h: http.Header{}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := upgradeType(tt.h); got != tt.want {
				t.Errorf("upgradeType(%v) = %q, want %q", tt.h, got, tt.want)
			}
		})
	}
}

var requestIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestPrepareRequestHeaders(t *testing.T) {
	const generated = "<generated>"
	tests := []struct {
		name string
		in   http.Header
		want http.Header // X-Request-Id: generated means 32 hex digits
	}{
		{name: "bare request", in: http.Header{},
			want: http.Header{"User-Agent": {""}, "X-Request-Id": {generated}}},
		{name: "User-Agent and X-Request-Id kept", in: http.Header{"User-Agent": {"curl/8"}, "X-Request-Id": {"abc"}},
			want: http.Header{"User-Agent": {"curl/8"}, "X-Request-Id": {"abc"}}},
		{name: "empty User-Agent kept empty", in: http.Header{"User-Agent": {""}},
			want: http.Header{"User-Agent": {""}, "X-Request-Id": {generated}}},
		{name: "upgrade kept", in: http.Header{"Connection": {"keep-alive, Upgrade"}, "Upgrade": {"websocket"}, "Keep-Alive": {"5"}},
			want: http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}, "User-Agent": {""}, "X-Request-Id": {generated}}},
		{name: "Upgrade without Connection dropped", in: http.Header{"Upgrade": {"websocket"}},
			want: http.Header{"User-Agent": {""}, "X-Request-Id": {generated}}},
		{name: "TE trailers kept alone", in: http.Header{"Te": {"gzip, Trailers"}},
			want: http.Header{"Te": {"trailers"}, "User-Agent": {""}, "X-Request-Id": {generated}}},
		{name: "TE without trailers dropped", in: http.Header{"Te": {"gzip"}},
			want: http.Header{"User-Agent": {""}, "X-Request-Id": {generated}}},
		{name: "hop headers and Connection names dropped", in: http.Header{
			"Connection": {"X-Secret"}, "X-Secret": {"s"}, "Proxy-Authorization": {"p"}, "Transfer-Encoding": {"chunked"}, "Accept": {"*/*"}},
			want: http.Header{"Accept": {"*/*"}, "User-Agent": {""}, "X-Request-Id": {generated}}},
		{name: "X-Request-Id named by Connection is replaced", in: http.Header{"Connection": {"X-Request-Id"}, "X-Request-Id": {"abc"}},
			want: http.Header{"User-Agent": {""}, "X-Request-Id": {generated}}},
	}
	forwarding := []string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Port", "X-Forwarded-Proto", "X-Real-Ip", "X-Scheme"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "http://example.com/", nil)
			r.Header = tt.in.Clone()
			x := &exchange.Request{HTTP: r, Peer: netip.MustParseAddr("192.0.2.1"), ClientIP: netip.MustParseAddr("192.0.2.1"), Scheme: "http", Port: "80"}
			prepareRequestHeaders(x)
			got := r.Header.Clone()
			for _, name := range forwarding {
				if _, ok := got[name]; !ok {
					t.Errorf("%s not set", name)
				}
				delete(got, name)
			}
			if id := got.Get("X-Request-Id"); tt.want.Get("X-Request-Id") == generated {
				if !requestIDPattern.MatchString(id) {
					t.Errorf("X-Request-Id = %q, want 32 lower-case hex digits", id)
				}
				got["X-Request-Id"] = []string{generated}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("headers = %v, want %v (forwarding headers aside)", got, tt.want)
			}
		})
	}
}

func TestPeerText(t *testing.T) {
	tests := []struct {
		remoteAddr, peer, want string
		shared                 bool // the text is RemoteAddr's, not allocated
	}{
		{remoteAddr: "192.0.2.7:4711", peer: "192.0.2.7", want: "192.0.2.7", shared: true},
		{remoteAddr: "[2001:db8::1]:443", peer: "2001:db8::1", want: "2001:db8::1", shared: true},
		{remoteAddr: "[fe80::1%eth0]:443", peer: "fe80::1%eth0", want: "fe80::1%eth0", shared: true},
		{remoteAddr: "[2001:0db8:0:0::1]:443", peer: "2001:db8::1", want: "2001:db8::1"},
		{remoteAddr: "[::ffff:192.0.2.7]:80", peer: "192.0.2.7", want: "192.0.2.7"},
		{remoteAddr: "", peer: "192.0.2.7", want: "192.0.2.7"},
		{remoteAddr: "", want: "invalid IP"},
		{remoteAddr: ":80", want: "invalid IP"},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tt.remoteAddr
		x := &exchange.Request{HTTP: r}
		if tt.peer != "" {
			x.Peer = netip.MustParseAddr(tt.peer)
		}
		if got := peerText(x); got != tt.want {
			t.Errorf("peerText(%q, %s) = %q, want %q", tt.remoteAddr, tt.peer, got, tt.want)
		}
		allocs := testing.AllocsPerRun(10, func() { peerText(x) })
		if tt.shared && allocs != 0 {
			t.Errorf("peerText(%q) allocated %v times, want none", tt.remoteAddr, allocs)
		}
	}
}

func TestNewRequestID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := newRequestID()
		if !requestIDPattern.MatchString(id) {
			t.Fatalf("newRequestID() = %q, want 32 lower-case hex digits", id)
		}
		if seen[id] {
			t.Fatalf("newRequestID() returned %q twice in 1000 calls", id)
		}
		seen[id] = true
	}
}

// TestForwardingHeaders goes through prepareRequestHeaders, which removes
// an untrusted peer's forwarding headers before setForwardingHeaders.
func TestForwardingHeaders(t *testing.T) {
	sent := http.Header{
		"X-Forwarded-For":   {"203.0.113.1, 203.0.113.2", "203.0.113.3"},
		"X-Forwarded-Host":  {"original.example"},
		"X-Forwarded-Port":  {"8443"},
		"X-Forwarded-Proto": {"https"},
		"X-Real-Ip":         {"203.0.113.9"},
		"Forwarded":         {"for=203.0.113.1"},
		"Accept":            {"*/*"},
	}
	tests := []struct {
		name    string
		in      http.Header
		trusted bool
		port    string
		scheme  string
		want    http.Header
	}{
		{name: "untrusted peer replaces", in: sent, port: "80", scheme: "http", want: http.Header{
			"X-Forwarded-For": {"192.0.2.7"}, "X-Forwarded-Host": {"example.com:8080"}, "X-Forwarded-Port": {"80"},
			"X-Forwarded-Proto": {"http"}, "X-Real-Ip": {"198.51.100.4"}, "X-Scheme": {"http"}, "Accept": {"*/*"},
		}},
		{name: "trusted peer extends and keeps", in: sent, trusted: true, port: "80", scheme: "https", want: http.Header{
			"X-Forwarded-For":  {"203.0.113.1, 203.0.113.2, 203.0.113.3, 192.0.2.7"},
			"X-Forwarded-Host": {"original.example"}, "X-Forwarded-Port": {"8443"},
			"X-Forwarded-Proto": {"https"}, "X-Real-Ip": {"198.51.100.4"}, "X-Scheme": {"https"}, "Forwarded": {"for=203.0.113.1"}, "Accept": {"*/*"},
		}},
		{name: "trusted peer without headers", in: http.Header{}, trusted: true, port: "443", scheme: "https", want: http.Header{
			"X-Forwarded-For": {"192.0.2.7"}, "X-Forwarded-Host": {"example.com:8080"}, "X-Forwarded-Port": {"443"},
			"X-Forwarded-Proto": {"https"}, "X-Real-Ip": {"198.51.100.4"}, "X-Scheme": {"https"},
		}},
		{name: "scheme is the exchange's, not the header's", in: http.Header{"X-Forwarded-Proto": {"https"}}, trusted: true, port: "80", scheme: "http", want: http.Header{
			"X-Forwarded-For": {"192.0.2.7"}, "X-Forwarded-Host": {"example.com:8080"}, "X-Forwarded-Port": {"80"},
			"X-Forwarded-Proto": {"http"}, "X-Real-Ip": {"198.51.100.4"}, "X-Scheme": {"http"},
		}},
		{name: "no port", in: http.Header{}, port: "", scheme: "http", want: http.Header{
			"X-Forwarded-For": {"192.0.2.7"}, "X-Forwarded-Host": {"example.com:8080"},
			"X-Forwarded-Proto": {"http"}, "X-Real-Ip": {"198.51.100.4"}, "X-Scheme": {"http"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "http://example.com:8080/", nil)
			r.Header = tt.in.Clone()
			x := &exchange.Request{HTTP: r, Peer: netip.MustParseAddr("192.0.2.7"), PeerTrusted: tt.trusted,
				ClientIP: netip.MustParseAddr("198.51.100.4"), Scheme: tt.scheme, Port: tt.port}
			prepareRequestHeaders(x)
			h := r.Header
			delete(h, "User-Agent")
			delete(h, "X-Request-Id")
			if !reflect.DeepEqual(h, tt.want) {
				t.Errorf("headers =\n  %v\nwant\n  %v", h, tt.want)
			}
		})
	}
}

func TestForwardingHeadersIPv6(t *testing.T) {
	r := httptest.NewRequest("GET", "http://[2001:db8::1]/", nil)
	r.Header = http.Header{}
	x := &exchange.Request{HTTP: r, Peer: netip.MustParseAddr("2001:db8::7"), ClientIP: netip.MustParseAddr("2001:db8::8"), Scheme: "http"}
	prepareRequestHeaders(x)
	h := r.Header
	if got := h.Get("X-Forwarded-For"); got != "2001:db8::7" {
		t.Errorf("X-Forwarded-For = %q, want %q", got, "2001:db8::7")
	}
	if got := h.Get("X-Real-Ip"); got != "2001:db8::8" {
		t.Errorf("X-Real-Ip = %q, want %q", got, "2001:db8::8")
	}
}

func TestCopyResponseHeaders(t *testing.T) {
	tests := []struct {
		name        string
		dst, src    http.Header
		trailer     http.Header
		want        http.Header // without Trailer
		wantTrailer []string    // names announced, in any order
	}{
		{name: "hop headers dropped", dst: http.Header{},
			src: http.Header{"Connection": {"X-Hop"}, "X-Hop": {"1"}, "Keep-Alive": {"5"}, "Transfer-Encoding": {"chunked"},
				"Trailer": {"X-T"}, "Upgrade": {"h2c"}, "Content-Type": {"text/plain"}},
			want: http.Header{"Content-Type": {"text/plain"}}},
		{name: "values added to what is there", dst: http.Header{"Set-Cookie": {"a=1"}},
			src:  http.Header{"Set-Cookie": {"b=2", "c=3"}, "Vary": {"Accept"}},
			want: http.Header{"Set-Cookie": {"a=1", "b=2", "c=3"}, "Vary": {"Accept"}}},
		{name: "trailers announced", dst: http.Header{},
			src:         http.Header{"Content-Type": {"application/grpc"}},
			trailer:     http.Header{"Grpc-Status": nil, "Grpc-Message": nil},
			want:        http.Header{"Content-Type": {"application/grpc"}},
			wantTrailer: []string{"Grpc-Message", "Grpc-Status"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := tt.dst.Clone()
			copyResponseHeaders(dst, tt.src.Clone(), tt.trailer)
			var announced []string
			for _, line := range dst["Trailer"] {
				for n := range strings.SplitSeq(line, ",") {
					announced = append(announced, strings.TrimSpace(n))
				}
			}
			delete(dst, "Trailer")
			sort.Strings(announced)
			if !slices.Equal(announced, tt.wantTrailer) {
				t.Errorf("Trailer announces %q, want %q", announced, tt.wantTrailer)
			}
			if !reflect.DeepEqual(dst, tt.want) {
				t.Errorf("headers = %v, want %v", dst, tt.want)
			}
		})
	}
}

func TestCopyTrailers(t *testing.T) {
	tests := []struct {
		name      string
		trailer   http.Header
		announced int
		want      http.Header
	}{
		{name: "none", trailer: nil, announced: 0, want: http.Header{}},
		{name: "all announced", trailer: http.Header{"Grpc-Status": {"0"}, "Grpc-Message": {"ok"}}, announced: 2,
			want: http.Header{"Grpc-Status": {"0"}, "Grpc-Message": {"ok"}}},
		{name: "one unannounced", trailer: http.Header{"Grpc-Status": {"0"}, "X-Late": {"1"}}, announced: 1,
			want: http.Header{http.TrailerPrefix + "Grpc-Status": {"0"}, http.TrailerPrefix + "X-Late": {"1"}}},
		{name: "none announced", trailer: http.Header{"X-Late": {"1", "2"}}, announced: 0,
			want: http.Header{http.TrailerPrefix + "X-Late": {"1", "2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := http.Header{}
			copyTrailers(dst, tt.trailer, tt.announced)
			if !reflect.DeepEqual(dst, tt.want) {
				t.Errorf("headers = %v, want %v", dst, tt.want)
			}
		})
	}
}

// TestTrailersReachTheClient checks, through a real server, that announced
// and unannounced trailers set as copyResponseHeaders and copyTrailers set
// them arrive once each. A member sends trailers only with a body of
// unknown length, which copyBody flushes; so does this handler.
func TestTrailersReachTheClient(t *testing.T) {
	tests := []struct {
		name    string
		trailer http.Header // as the member's response has it before the body
		after   http.Header // after the body
	}{
		{name: "announced", trailer: http.Header{"X-A": nil}, after: http.Header{"X-A": {"1"}}},
		{name: "announced and unannounced", trailer: http.Header{"X-A": nil}, after: http.Header{"X-A": {"1"}, "X-B": {"2"}}},
		{name: "unannounced", trailer: http.Header{}, after: http.Header{"X-B": {"2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				announced := len(tt.trailer)
				copyResponseHeaders(w.Header(), http.Header{}, tt.trailer)
				w.WriteHeader(200)
				w.Write([]byte("body"))
				w.(http.Flusher).Flush() // as copyBody does for a chunked member response
				copyTrailers(w.Header(), tt.after, announced)
			}))
			defer srv.Close()
			resp, err := srv.Client().Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if _, err := io.ReadAll(resp.Body); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(resp.Trailer, tt.after) {
				t.Errorf("client's trailers = %v, want %v", resp.Trailer, tt.after)
			}
		})
	}
}

// TestForwardingHeadersDoNotAlias checks that adding a value to one
// forwarding header leaves the others alone, although their values are
// allocated together.
func TestForwardingHeadersDoNotAlias(t *testing.T) {
	r := httptest.NewRequest("GET", "http://example.com/", nil)
	r.Header = http.Header{}
	x := &exchange.Request{HTTP: r, Peer: netip.MustParseAddr("192.0.2.7"), ClientIP: netip.MustParseAddr("198.51.100.4"), Scheme: "http", Port: "80"}
	prepareRequestHeaders(x)
	h := r.Header
	want := h.Clone()
	for _, name := range []string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Port", "X-Forwarded-Proto", "X-Real-Ip", "User-Agent", "X-Request-Id"} {
		h.Add(name, "added")
		want[name] = append(want[name], "added")
	}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("after adding a value to each header: %v, want %v", h, want)
	}
}

func TestUnforwardableHeaders(t *testing.T) {
	r := httptest.NewRequest("GET", "http://example.com/", nil)
	r.Header = http.Header{
		"X_forwarded_for": {"6.6.6.6"}, "X_real_ip": {"6.6.6.6"}, "Proxy": {"http://evil.test"},
		"X-Scheme": {"https"}, "X-Forwarded-Ssl": {"on"}, "X-Original-Forwarded-For": {"6.6.6.6"}, "Accept": {"*/*"},
	}
	x := &exchange.Request{HTTP: r, Peer: netip.MustParseAddr("192.0.2.1"), ClientIP: netip.MustParseAddr("192.0.2.1"), Scheme: "http", Port: "80"}
	prepareRequestHeaders(x)
	for _, name := range []string{"X_forwarded_for", "X_real_ip", "Proxy", "X-Forwarded-Ssl", "X-Original-Forwarded-For"} {
		if v, ok := r.Header[name]; ok {
			t.Errorf("%s reached the member: %q", name, v)
		}
	}
	if got := r.Header.Get("X-Scheme"); got != "http" {
		t.Errorf("X-Scheme %q, want the scheme the client used, http", got)
	}
	if r.Header.Get("Accept") != "*/*" {
		t.Error("an ordinary header was dropped")
	}
}

func TestUpgradeOffers(t *testing.T) {
	cases := []struct {
		upgrade string
		kept    bool
	}{
		{"websocket", true},
		{"h2c", false},
		{"H2C", false},
		{"websocket, h2c", false},
		{"foo/1, websocket", true},
	}
	for _, tc := range cases {
		t.Run(tc.upgrade, func(t *testing.T) {
			r := httptest.NewRequest("GET", "http://example.com/", nil)
			r.Header = http.Header{"Connection": {"Upgrade, HTTP2-Settings"}, "Upgrade": {tc.upgrade}, "Http2-Settings": {"AAA"}}
			prepareRequestHeaders(&exchange.Request{HTTP: r, Scheme: "http"})
			if kept := r.Header.Get("Upgrade") != ""; kept != tc.kept {
				t.Errorf("upgrade kept: %t, want %t (headers %v)", kept, tc.kept, r.Header)
			}
			if r.Header.Get("Http2-Settings") != "" {
				t.Error("HTTP2-Settings named by Connection was forwarded")
			}
		})
	}
}

func TestIsGRPC(t *testing.T) {
	cases := map[string]bool{
		"application/grpc":               true,
		"application/grpc+proto":         true,
		"application/grpc; charset=utf8": true,
		"application/grpc-web":           false,
		"application/grpc-web+proto":     false,
		"application/grpc-web-text":      false,
		"application/json":               false,
		"":                               false,
	}
	for ct, want := range cases {
		r := httptest.NewRequest("POST", "/", nil)
		r.Header.Set("Content-Type", ct)
		if got := isGRPC(r); got != want {
			t.Errorf("isGRPC(%q) = %t, want %t", ct, got, want)
		}
	}
}
