package daemon

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// targetsConfig gives every kind of answer ramjetd sends. app.test denies
// /admin, redirects /old, answers /fixed itself, proxies /down to a member
// that is not there, /empty to a pool without members, /h2c to a member
// reached over h2c, /named with a Server header of its own, and the rest
// to an HTTP/1.1 member. rw.test rewrites
// /rw/... to /... (as ingress-nginx's rewrite-target), secure.test
// redirects to HTTPS, and h2c.test denies /admin before the h2c member.
const targetsConfig = baseConfig + `
  {{if .Tokens}}server_tokens: true{{end}}
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /admin}}
            action: {pool: p}
            policies: {deny: ["0.0.0.0/0", "::/0"]}
          - match: {path: {prefix: /old}}
            action: {redirect: {url: "https://new.test/", code: 301}}
          - match: {path: {prefix: /fixed}}
            action: {respond: {status: 200, body: "fixed"}}
          - match: {path: {prefix: /down}}
            action: {pool: down}
          - match: {path: {prefix: /empty}}
            action: {pool: empty}
          - match: {path: {prefix: /h2c}}
            action: {pool: h2c}
          - match: {path: {prefix: /named}}
            action: {pool: p}
            policies: {response_headers: {set: [{name: Server, value: shop}]}}
          - match: {path: {prefix: /}}
            action: {pool: p}
      rw:
        domains: [rw.test]
        routes:
          - match: {path: {regex: "/rw(/|$)(.*)"}}
            action: {pool: p}
            policies: {rewrite: {path: "/$2"}}
      secure:
        domains: [secure.test]
        https_redirect: true
        routes:
          - match: {path: {prefix: /}}
            action: {pool: p}
      h2c:
        domains: [h2c.test]
        routes:
          - match: {path: {prefix: /admin}}
            action: {pool: h2c}
            policies: {deny: ["0.0.0.0/0", "::/0"]}
          - match: {path: {prefix: /}}
            action: {pool: h2c}
    pools:
      p: {members: ["{{.Member}}"]}
      h2c: {scheme: h2c, members: ["{{.H2C}}"]}
      down: {members: ["{{.Down}}"], retries: 0}
      empty: {members: []}
`

// path is one way through ramjetd: which server reads the client's
// request (ramjetd's own HTTP/1.1 server, net/http's, or net/http's
// HTTP/2 server) and which client sends it to the member (ramjetd's own
// for requests without a body, net/http's Transport for the others).
type path struct {
	name string
	send func(t *testing.T, td *testDaemon, host, target string) *http.Response
}

// everyPath lists the five ways a request can go through ramjetd.
var everyPath = []path{
	{"fast server, fast client", func(t *testing.T, td *testDaemon, host, target string) *http.Response {
		return rawRequest(t, td.bound.get("http"), "GET "+target+" HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n")
	}},
	{"net/http server, fast client", func(t *testing.T, td *testDaemon, host, target string) *http.Response {
		// A Content-Length field is not for the fast path to read.
		return rawRequest(t, td.bound.get("http"), "GET "+target+" HTTP/1.1\r\nHost: "+host+"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	}},
	{"net/http server, net/http client", func(t *testing.T, td *testDaemon, host, target string) *http.Response {
		return rawRequest(t, td.bound.get("http"), "POST "+target+" HTTP/1.1\r\nHost: "+host+"\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx")
	}},
	{"HTTP/2, fast client", func(t *testing.T, td *testDaemon, host, target string) *http.Response {
		return h2Request(t, td, http.MethodGet, host, target)
	}},
	{"HTTP/2, net/http client", func(t *testing.T, td *testDaemon, host, target string) *http.Response {
		return h2Request(t, td, http.MethodPost, host, target)
	}},
}

// h2Request sends target as the :path of an HTTP/2 request to the TLS
// listener, with a body of one byte for POST.
func h2Request(t *testing.T, td *testDaemon, method, host, target string) *http.Response {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	req := (&http.Request{
		Method: method,
		URL:    &url.URL{Scheme: "https", Host: td.bound.get("https"), Opaque: target},
		Header: http.Header{},
		Host:   host,
		Body:   http.NoBody,
	}).WithContext(ctx)
	if method == http.MethodPost {
		req.Body, req.ContentLength = io.NopCloser(strings.NewReader("x")), 1
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %q over HTTP/2: %v", method, target, err)
	}
	if resp.ProtoMajor != 2 {
		t.Fatalf("answered over %s, want HTTP/2", resp.Proto)
	}
	return resp
}

// readAll reads and closes a response body.
func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	return string(b)
}

// targetEcho answers with the request target exactly as it arrived.
func targetEcho(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	io.WriteString(w, r.RequestURI)
}

// TestRequestTargets checks what a fragment (#...) and raw bytes that a
// URI should carry percent-encoded do, on every path through ramjetd: the
// path before "#" is matched, as nginx's $uri, so a deny on /admin holds;
// the member receives the target as the client sent it, without the
// fragment, and a rewritten path percent-encoded as nginx encodes it.
func TestRequestTargets(t *testing.T) {
	member := startBackend(t, targetEcho)
	h2cMember := startStreamServer(t, &http.Server{Handler: http.HandlerFunc(targetEcho), Protocols: streamProtocols(false, false, true)}, nil)
	td := startDaemon(t, targetsConfig, map[string]any{"Member": member.addr, "H2C": h2cMember.addr, "Down": closedAddr(t)})
	raw := "/p/a\"b<c>{d}|e\\f^g`h"
	cases := []struct {
		name, host, target string
		status             int
		forwarded          string // the member's request target, for 200
	}{
		{"fragment after a denied path", "app.test", "/admin#frag", 403, ""},
		{"fragment below a denied path", "app.test", "/admin/x#frag", 403, ""},
		{"fragment inside the denied name", "app.test", "/adm#in", 200, "/adm"},
		{"fragment hiding dot-segments", "app.test", "/public#/../admin", 200, "/public"},
		{"fragment after dot-segments", "app.test", "/x/..#/admin", 200, "/x/.."},
		{"fragment after a query", "app.test", "/foo?a=1#frag", 200, "/foo?a=1"},
		{"query mark inside a fragment", "app.test", "/foo#a?b", 200, "/foo"},
		{"encoded number sign is a path byte", "app.test", "/%23admin", 200, "/%23admin"},
		{"raw bytes forwarded as received", "app.test", raw, 200, raw},
		{"raw bytes in the query", "app.test", "/q?x=\"y\"&z={1}", 200, "/q?x=\"y\"&z={1}"},
		{"bytes above 0x7F forwarded as received", "app.test", "/p/\xc3\xa9", 200, "/p/\xc3\xa9"},
		{"escapes forwarded as received", "app.test", "/p/a%22b%2Fc", 200, "/p/a%22b%2Fc"},
		{"raw bytes after a double slash are escaped", "app.test", "//p/a\"b", 200, "//p/a%22b"},
		{"raw bytes before a denied path", "app.test", "/x\"/../admin", 403, ""},
		{"rewrite drops the fragment", "rw.test", "/rw/x#frag", 200, "/x"},
		{"rewrite keeps the query before the fragment", "rw.test", "/rw/x?a=1#b", 200, "/x?a=1"},
		{"rewrite escapes as nginx", "rw.test", "/rw/a\"b<c>{d}|e\\f^g`h!'()*[]", 200, "/a%22b%3Cc%3E%7Bd%7D%7Ce%5Cf%5Eg%60h!'()*[]"},
		{"rewrite escapes bytes above 0x7F", "rw.test", "/rw/\xc3\xa9", 200, "/%C3%A9"},
		{"rewrite escapes a decoded number sign", "rw.test", "/rw/%23x", 200, "/%23x"},
		{"h2c member: fragment after a denied path", "h2c.test", "/admin#frag", 403, ""},
		{"h2c member: fragment after a query", "h2c.test", "/foo?a=1#frag", 200, "/foo?a=1"},
		{"h2c member: raw bytes forwarded as received", "h2c.test", raw + "/\xc3\xa9", 200, raw + "/\xc3\xa9"},
	}
	for _, p := range everyPath[:3] { // plain HTTP: HTTP/2 is over TLS
		t.Run("HTTPS redirect, "+p.name, func(t *testing.T) {
			resp := p.send(t, td, "secure.test", "/a\"b/caf\xc3\xa9?q=1#frag")
			readAll(t, resp)
			want := "https://secure.test/a%22b/caf%C3%A9?q=1"
			if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusPermanentRedirect || loc != want {
				t.Errorf("got %d to %q, want 308 to %q", resp.StatusCode, loc, want)
			}
		})
	}
	for _, p := range everyPath {
		t.Run(p.name, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					if strings.HasPrefix(tc.target, "//") && strings.HasPrefix(p.name, "HTTP/2") {
						t.Skip("net/http's HTTP/2 client sends no :path that starts with // verbatim")
					}
					before := member.requests.Load() + h2cMember.requests.Load()
					resp := p.send(t, td, tc.host, tc.target)
					body := readAll(t, resp)
					if resp.StatusCode != tc.status {
						t.Fatalf("status %d (%q), want %d", resp.StatusCode, body, tc.status)
					}
					if tc.status != 200 {
						if n := member.requests.Load() + h2cMember.requests.Load() - before; n != 0 {
							t.Errorf("the member saw %d requests, want none", n)
						}
						return
					}
					if body != tc.forwarded {
						t.Errorf("the member received %q, want %q", body, tc.forwarded)
					}
				})
			}
		})
	}
}

// malformedMember answers each request with the head its path names. It
// never closes a connection itself: a client that waits for the member to
// close a body without a length waits until the test ends.
func malformedMember(t *testing.T, heads map[string]string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var conns sync.WaitGroup
	t.Cleanup(conns.Wait)
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer conns.Done()
				go func() { <-done; c.Close() }()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					io.WriteString(c, heads[strings.TrimPrefix(req.URL.Path, "/")])
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestMalformedMemberHeads checks that a member's head with whitespace
// before a field's colon, or a field without a colon, gets 502 at once on
// every path (nginx: "upstream sent invalid header"), instead of a body
// read until the member closes; obs-fold is replaced by a space, as RFC
// 9112 §5.2 allows a proxy.
func TestMalformedMemberHeads(t *testing.T) {
	heads := map[string]string{
		"space-before-length-colon":   "HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok",
		"tab-before-length-colon":     "HTTP/1.1 200 OK\r\nContent-Length\t: 2\r\n\r\nok",
		"space-before-encoding-colon": "HTTP/1.1 200 OK\r\nTransfer-Encoding : chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
		"space-before-other-colon":    "HTTP/1.1 200 OK\r\nX-Foo : bar\r\nContent-Length: 2\r\n\r\nok",
		"space-before-colon-no-body":  "HTTP/1.1 204 No Content\r\nX-Foo : bar\r\n\r\n",
		"field-without-colon":         "HTTP/1.1 200 OK\r\nX-Foo bar\r\nContent-Length: 2\r\n\r\nok",
		"obs-fold":                    "HTTP/1.1 200 OK\r\nX-Foo: bar\r\n baz\r\nContent-Length: 2\r\n\r\nok",
	}
	td := startDaemon(t, poolConfig, map[string]any{"Members": []string{malformedMember(t, heads)}})
	for _, p := range everyPath {
		t.Run(p.name, func(t *testing.T) {
			for name := range heads {
				t.Run(name, func(t *testing.T) {
					start := time.Now()
					resp := p.send(t, td, "app.test", "/"+name)
					body := readAll(t, resp)
					if took := time.Since(start); took > 5*time.Second {
						t.Errorf("answered after %v, want at once (the member never closes its connection)", took)
					}
					if name == "obs-fold" {
						if resp.StatusCode != 200 || body != "ok" || resp.Header.Get("X-Foo") != "bar baz" {
							t.Errorf("got %d %q X-Foo %q, want 200 \"ok\" X-Foo \"bar baz\"", resp.StatusCode, body, resp.Header.Get("X-Foo"))
						}
						return
					}
					if resp.StatusCode != http.StatusBadGateway {
						t.Errorf("got %d %q, want 502", resp.StatusCode, body)
					}
				})
			}
		})
	}
}

// TestServerHeader checks that no answer carries a Server header by
// default, the member's included, as ingress-nginx's server-tokens: false;
// with server_tokens: true every answer carries exactly "Server: ramjet".
func TestServerHeader(t *testing.T) {
	named := func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Server", "member/1.0")
		io.WriteString(w, "from the member")
	}
	member := startBackend(t, named)
	h2cMember := startStreamServer(t, &http.Server{Handler: http.HandlerFunc(named), Protocols: streamProtocols(false, false, true)}, nil)
	upgrading := startRawBackend(t, func(c *net.TCPConn, _ string) {
		io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nServer: member/1.0\r\n\r\n")
	})
	plain, h2 := everyPath[0], everyPath[3]
	framing := path{"ambiguous framing", func(t *testing.T, td *testDaemon, host, target string) *http.Response {
		return rawRequest(t, td.bound.get("http"), "POST "+target+" HTTP/1.1\r\nHost: "+host+"\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
	}}
	type answer struct {
		name         string
		status       int
		via          path
		host, target string
	}
	explicit := answer{"set by response_headers", 200, plain, "app.test", "/named"}
	answers := []answer{
		{"unknown host", 404, plain, "other.test", "/"},
		{"redirect action", 301, plain, "app.test", "/old"},
		{"HTTPS redirect", 308, plain, "secure.test", "/"},
		{"denied", 403, plain, "app.test", "/admin"},
		{"fixed response", 200, plain, "app.test", "/fixed"},
		{"member unreachable", 502, plain, "app.test", "/down"},
		{"no members", 503, plain, "app.test", "/empty"},
		{"bad path", 400, plain, "app.test", "/../x"},
		{"ambiguous framing", 400, framing, "app.test", "/"},
		{"HTTP/2 denied", 403, h2, "app.test", "/admin"},
		{"HTTP/2 unknown host", 404, h2, "other.test", "/"},
		{"proxied, h2c member", 200, h2, "app.test", "/h2c"},
	}
	for _, p := range everyPath {
		answers = append(answers, answer{"proxied, " + p.name, 200, p, "app.test", "/"})
	}
	for _, tokens := range []bool{false, true} {
		name, want := "default", []string(nil)
		if tokens {
			name, want = "server_tokens", []string{"ramjet"}
		}
		t.Run(name, func(t *testing.T) {
			data := map[string]any{"Member": member.addr, "H2C": h2cMember.addr, "Down": closedAddr(t), "Tokens": tokens}
			td := startDaemon(t, targetsConfig, data)
			for _, a := range answers {
				t.Run(a.name, func(t *testing.T) {
					resp := a.via.send(t, td, a.host, a.target)
					body := readAll(t, resp)
					if resp.StatusCode != a.status {
						t.Fatalf("status %d (%q), want %d", resp.StatusCode, body, a.status)
					}
					if got := resp.Header.Values("Server"); !slices.Equal(got, want) {
						t.Errorf("Server %q, want %q", got, want)
					}
				})
			}
			t.Run(explicit.name, func(t *testing.T) {
				resp := explicit.via.send(t, td, explicit.host, explicit.target)
				readAll(t, resp)
				if got, want := resp.Header.Values("Server"), []string{"shop"}; !slices.Equal(got, want) {
					t.Errorf("Server %q, want %q: a route's explicit header wins", got, want)
				}
			})
			t.Run("upgrade", func(t *testing.T) {
				td.write(t, strings.Replace(targetsConfig, `"{{.Member}}"`, `"{{.Upgrading}}"`, 1), map[string]any{
					"Upgrading": upgrading.addr, "H2C": h2cMember.addr, "Down": data["Down"], "Tokens": tokens})
				td.reload(t)
				conn, br := dialRaw(t, td.bound.get("http"), "GET /ws HTTP/1.1\r\nHost: app.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
				defer conn.Close()
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("reading the answer: %v", err)
				}
				if resp.StatusCode != http.StatusSwitchingProtocols {
					t.Fatalf("status %d, want 101", resp.StatusCode)
				}
				if got := resp.Header.Values("Server"); !slices.Equal(got, want) {
					t.Errorf("Server %q, want %q", got, want)
				}
			})
		})
	}
}
