package daemon

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSmugglingAndOversizedHeaders(t *testing.T) {
	b := startBackend(t, echo("b"))
	td := startDaemon(t, poolConfig, map[string]any{"Members": []string{b.addr}})
	big := strings.Repeat("a", 70<<10)
	cases := []struct {
		name    string
		request string
		status  int
	}{
		{"Content-Length with Transfer-Encoding", "POST / HTTP/1.1\r\nHost: app.test\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
		{"Transfer-Encoding with Content-Length", "POST / HTTP/1.1\r\nHost: app.test\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n", 400},
		{"differing Content-Lengths", "POST / HTTP/1.1\r\nHost: app.test\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcde", 400},
		{"obs-fold", "GET / HTTP/1.1\r\nHost: app.test\r\nX-A: a\r\n b\r\n\r\n", 400},
		{"unsupported Transfer-Encoding", "POST / HTTP/1.1\r\nHost: app.test\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501},
		{"space before colon", "GET / HTTP/1.1\r\nHost: app.test\r\nX-A : b\r\n\r\n", 400},
		{"CONNECT", "CONNECT app.test:443 HTTP/1.1\r\nHost: app.test:443\r\n\r\n", 405},
		{"headers over 64 KiB", "GET / HTTP/1.1\r\nHost: app.test\r\nX-Big: " + big + "\r\n\r\n", 431},
		{"headers just over 64 KiB", "GET / HTTP/1.1\r\nHost: app.test\r\nX-Big: " + big[:65<<10] + "\r\n\r\n", 431},
		{"CONNECT then a smuggling attempt", "CONNECT app.test:443 HTTP/1.1\r\nHost: app.test:443\r\n\r\n" + smuggle, 405},
		{"refused upgrade then a smuggling attempt", "GET / HTTP/1.1\r\nHost: app.test\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n" + smuggle, 200},
		{"headers under 64 KiB", "GET / HTTP/1.1\r\nHost: app.test\r\nConnection: close\r\nX-Big: " + big[:60<<10] + "\r\n\r\n", 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := b.requests.Load()
			conn, br := dialRaw(t, td.bound.get("http"), tc.request)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("reading the answer: %v", err)
			}
			io.Copy(io.Discard, resp.Body)
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
			wantHits := int64(0)
			if tc.status == 200 {
				wantHits = 1
			}
			if hits := b.requests.Load() - before; hits != wantHits {
				t.Errorf("the member saw %d requests, want %d: nothing refused or following may pass", hits, wantHits)
			}
			// Whatever followed on the connection is never answered as a
			// request of its own: the connection closes.
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			if rest, _ := io.ReadAll(br); len(rest) > 0 && !strings.HasPrefix(string(rest), "HTTP/1.1 400") {
				t.Errorf("after the answer the connection carried %q", rest)
			}
		})
	}
}

// smuggle is a request with ambiguous framing hiding a second one.
const smuggle = "POST / HTTP/1.1\r\nHost: app.test\r\nContent-Length: 35\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: app.test\r\n\r\n"

// TestSmugglingOverTLS checks the framing guard also watches HTTP/1.1 over
// TLS.
func TestSmugglingOverTLS(t *testing.T) {
	b := startBackend(t, echo("b"))
	td := startDaemon(t, poolConfig, map[string]any{"Members": []string{b.addr}})
	conn, err := tls.Dial("tcp", td.bound.get("https"), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST / HTTP/1.1\r\nHost: app.test\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 400 || b.requests.Load() != 0 {
		t.Errorf("status %d with %d requests at the member, want 400 and none", resp.StatusCode, b.requests.Load())
	}
}

func TestHealthListener(t *testing.T) {
	b := startBackend(t, echo("b"))
	td := startDaemon(t, poolConfig, map[string]any{"Members": []string{b.addr}})
	get(t, client(), td.url("http")+"/", "app.test")
	cases := []struct {
		path   string
		status int
		want   string
	}{
		{"/healthz", 200, "ok"},
		{"/readyz", 200, "ready"},
		{"/metrics", 200, `ramjet_requests_total{application="app",class="2xx",tenant="t"} 1`},
		{"/metrics", 200, `ramjet_upstream_requests_total{member="` + b.addr + `",pool="p"} 1`},
		{"/metrics", 200, "ramjet_config_generation 1"},
		{"/metrics", 200, `ramjet_upstream_response_seconds_count{pool="p"} 1`},
		{"/v1/status", 404, "serves /healthz, /readyz and /metrics only"},
		{"/metrics/../v1/reload", 404, ""},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			status, body, _ := rawGet(t, td.bound.get("health"), "localhost", tc.path)
			if status != tc.status || !strings.Contains(body, tc.want) {
				t.Errorf("got %d, want %d containing %q; body:\n%.2000s", status, tc.status, tc.want, body)
			}
		})
	}
}

// TestGracefulShutdown checks the order of a SIGTERM: readiness fails at
// once while requests are still served during the drain delay, then a
// request in flight completes before the listeners close.
func TestGracefulShutdown(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	b := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			arrived <- struct{}{}
			<-release
		}
		io.WriteString(w, "done")
	})
	td := startDaemon(t, poolConfig, map[string]any{"Members": []string{b.addr}})
	td.opts.DrainDelay = 500 * time.Millisecond
	var slowStatus int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		slowStatus, _, _ = send(t, client(), td, http.MethodGet, "/slow", nil)
	}()
	<-arrived
	stopped := make(chan struct{})
	go func() {
		td.Shutdown()
		close(stopped)
	}()
	time.Sleep(100 * time.Millisecond)
	if status, _, _ := rawGet(t, td.bound.get("health"), "localhost", "/readyz"); status != 503 {
		t.Errorf("/readyz during the drain: %d, want 503", status)
	}
	resp := rawRequest(t, td.bound.get("http"), "GET / HTTP/1.1\r\nHost: app.test\r\n\r\n")
	resp.Body.Close()
	if resp.StatusCode != 200 || !resp.Close {
		t.Errorf("a keep-alive request during the drain: %d, close %t; want 200 with Connection: close", resp.StatusCode, resp.Close)
	}
	close(release)
	wg.Wait()
	if slowStatus != 200 {
		t.Errorf("the request in flight at shutdown got %d, want 200", slowStatus)
	}
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown did not finish")
	}
	if _, err := net.DialTimeout("tcp", td.bound.get("http"), time.Second); err == nil {
		t.Error("the listener still accepts connections after shutdown")
	}
}

func TestCertificateSelection(t *testing.T) {
	b := startBackend(t, echo("b"))
	ca := newCA(t, "test CA")
	dir := t.TempDir()
	exactCert, exactKey := ca.issue(t, "www.example.com")
	wildCert, wildKey := ca.issue(t, "*.example.com")
	defCert, defKey := ca.issue(t, "default.test")
	data := map[string]any{
		"Member":    b.addr,
		"ExactCert": writeFile(t, dir, "exact.crt", exactCert), "ExactKey": writeFile(t, dir, "exact.key", exactKey),
		"WildCert": writeFile(t, dir, "wild.crt", wildCert), "WildKey": writeFile(t, dir, "wild.key", wildKey),
		"DefCert": writeFile(t, dir, "def.crt", defCert), "DefKey": writeFile(t, dir, "def.key", defKey),
	}
	td := startDaemon(t, `
server:
  listeners:
    https: {address: "127.0.0.1:0", tls: {cert_file: "{{.DefCert}}", key_file: "{{.DefKey}}"}}
  admin: {socket: "{{.Dir}}/admin.sock"}
tenants:
  t:
    applications:
      exact:
        domains: [www.example.com]
        tls: {cert_file: "{{.ExactCert}}", key_file: "{{.ExactKey}}"}
        routes: [{match: {path: {prefix: /}}, action: {pool: p}}]
      wild:
        domains: ["*.example.com"]
        tls: {cert_file: "{{.WildCert}}", key_file: "{{.WildKey}}"}
        routes: [{match: {path: {prefix: /}}, action: {pool: p}}]
    pools:
      p: {members: ["{{.Member}}"]}
`, data)
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	cases := []struct{ sni, want string }{
		{"www.example.com", "www.example.com"},
		{"shop.example.com", "*.example.com"},
		{"a.b.example.com", "default.test"},
		{"other.test", "default.test"},
	}
	for _, tc := range cases {
		t.Run(tc.sni, func(t *testing.T) {
			conn, err := tls.Dial("tcp", td.bound.get("https"), &tls.Config{ServerName: tc.sni, RootCAs: roots, InsecureSkipVerify: tc.want == "default.test"})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if got := conn.ConnectionState().PeerCertificates[0].Subject.CommonName; got != tc.want {
				t.Errorf("certificate %q, want %q", got, tc.want)
			}
		})
	}
	// A reload with a new certificate for the exact host takes effect
	// without a restart.
	newCert, newKey := ca.issue(t, "www.example.com", "renewed.example.com")
	writeFile(t, dir, "exact.crt", newCert)
	writeFile(t, dir, "exact.key", newKey)
	td.reload(t)
	conn, err := tls.Dial("tcp", td.bound.get("https"), &tls.Config{ServerName: "www.example.com", RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if names := conn.ConnectionState().PeerCertificates[0].DNSNames; len(names) != 2 {
		t.Errorf("after reload the certificate names %v, want the renewed one", names)
	}
}

func TestHTTP2Limits(t *testing.T) {
	b := startBackend(t, echo("b"))
	td := startDaemon(t, strings.Replace(poolConfig, "  admin:", "  limits: {http2_max_concurrent_streams: 7}\n  admin:", 1), map[string]any{"Members": []string{b.addr}})
	// Read the server's SETTINGS frame on a raw HTTP/2 connection.
	conn, err := tls.Dial("tcp", td.bound.get("https"), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("ALPN %q, want h2", p)
	}
	io.WriteString(conn, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	conn.Write([]byte{0, 0, 0, 4, 0, 0, 0, 0, 0}) // empty SETTINGS
	header := make([]byte, 9)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(conn, header); err != nil || header[3] != 4 {
		t.Fatalf("want a SETTINGS frame first, got % x %v", header, err)
	}
	payload := make([]byte, int(header[0])<<16|int(header[1])<<8|int(header[2]))
	io.ReadFull(conn, payload)
	found := false
	for i := 0; i+6 <= len(payload); i += 6 {
		id := int(payload[i])<<8 | int(payload[i+1])
		val := int(payload[i+2])<<24 | int(payload[i+3])<<16 | int(payload[i+4])<<8 | int(payload[i+5])
		if id == 3 { // SETTINGS_MAX_CONCURRENT_STREAMS
			found = val == 7
		}
	}
	if !found {
		t.Errorf("SETTINGS % x does not set MAX_CONCURRENT_STREAMS to 7", payload)
	}
}

// TestSlowClientsAreCut checks the read-header and idle timeouts: a client
// trickling headers and a keep-alive client that goes quiet are both
// disconnected, and a normal client is served meanwhile.
func TestSlowClientsAreCut(t *testing.T) {
	b := startBackend(t, echo("b"))
	config := strings.Replace(poolConfig, "  admin:", "  limits: {read_header_timeout: 300ms, idle_timeout: 300ms}\n  admin:", 1)
	td := startDaemon(t, config, map[string]any{"Members": []string{b.addr}})
	cases := []struct {
		name  string
		sends string
	}{
		{"headers never finished", "GET / HTTP/1.1\r\nHost: app.test\r\nX-Slow: "},
		{"idle after a request", "GET / HTTP/1.1\r\nHost: app.test\r\n\r\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", td.bound.get("http"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			io.WriteString(conn, tc.sends)
			start := time.Now()
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			// Read whatever the server sends until it closes.
			io.Copy(io.Discard, conn)
			if elapsed := time.Since(start); elapsed > 3*time.Second {
				t.Errorf("the connection stayed open %v, want it closed after about 300ms", elapsed)
			}
			if status, _, _ := rawGet(t, td.bound.get("http"), "app.test", "/"); status != 200 {
				t.Errorf("a normal client got %d", status)
			}
		})
	}
}

// TestRequestBodyTimeout checks that a client announcing a body and not
// sending it is answered 408 after read_body_timeout, and that a long
// answer after a complete body is not cut by that timeout.
func TestRequestBodyTimeout(t *testing.T) {
	b := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/long" {
			for i := range 4 {
				fmt.Fprintf(w, "part %d\n", i)
				w.(http.Flusher).Flush()
				time.Sleep(200 * time.Millisecond)
			}
		}
	})
	config := strings.Replace(poolConfig, "  admin:", "  limits: {read_body_timeout: 300ms}\n  admin:", 1)
	td := startDaemon(t, config, map[string]any{"Members": []string{b.addr}})
	for _, length := range []string{"100", "200000"} {
		t.Run("announced "+length+" bytes, sent 3", func(t *testing.T) {
			conn, err := net.Dial("tcp", td.bound.get("http"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			io.WriteString(conn, "POST / HTTP/1.1\r\nHost: app.test\r\nContent-Length: "+length+"\r\n\r\nabc")
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			if resp.StatusCode != http.StatusRequestTimeout {
				t.Errorf("status %d, want 408", resp.StatusCode)
			}
		})
	}
	t.Run("long answer after a complete body", func(t *testing.T) {
		status, body, err := send(t, client(), td, http.MethodPost, "/long", []byte("payload"))
		if err != nil || status != 200 || !strings.HasSuffix(body, "part 3\n") {
			t.Errorf("got %d %q %v, want the four parts", status, body, err)
		}
	})
}
