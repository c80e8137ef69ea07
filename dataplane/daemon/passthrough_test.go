package daemon

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/certs"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// passthroughConfig has a passthrough application (pass.test and
// *.wild.test) and a terminated one (term.test) on the same listeners.
const passthroughConfig = `
server:
  listeners:
    http: {address: "127.0.0.1:0"}
    https: {address: "127.0.0.1:0", tls: {}}
  health: {address: "127.0.0.1:0"}
  admin: {socket: "{{.Dir}}/admin.sock", allow_loopback_members: true}
tenants:
  t:
    applications:
      pass:
        domains: [pass.test, "*.wild.test"]
        {{if .Passthrough}}passthrough: {pool: p{{if .Idle}}, idle_timeout: {{.Idle}}{{end}}}{{end}}
        routes:
          - match: {path: {prefix: /}}
            action: {respond: {status: 200, body: "plain http of pass"}}
      term:
        domains: [term.test]
        routes:
          - match: {path: {prefix: /}}
            action: {respond: {status: 200, body: "terminated"}}
    pools:
      p:
        members_from: api
        members: [{{range .Members}}"{{.}}", {{end}}]
`

// tlsBackend is a member that terminates TLS itself with its own
// certificate and requires a client certificate of its clients' CA.
type tlsBackend struct {
	addr  string
	conns atomic.Int64
}

// pki is the test's authorities: the backends' (which the clients trust)
// and the clients' (which the backends trust).
type pki struct {
	backendCA, clientCA *testCA
	clientCert          tls.Certificate
}

func newPKI(t *testing.T) *pki {
	p := &pki{backendCA: newCA(t, "backend CA"), clientCA: newCA(t, "client CA")}
	certPEM, keyPEM := p.clientCA.issue(t, "client-1")
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	p.clientCert = cert
	return p
}

// startTLSBackend serves HTTPS with a certificate for pass.test and
// *.wild.test, answering with its name, the client certificate's common
// name and the server name the client asked for.
func (p *pki) startTLSBackend(t *testing.T, name string) *tlsBackend {
	t.Helper()
	certPEM, keyPEM := p.backendCA.issue(t, "pass.test", "*.wild.test")
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	clientCAs := x509.NewCertPool()
	clientCAs.AddCert(p.clientCA.cert)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &tlsBackend{addr: ln.Addr().String()}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s client=%s sni=%s", name, r.TLS.PeerCertificates[0].Subject.CommonName, r.TLS.ServerName)
		}),
		// The test CA issues server certificates: the client's chain is
		// verified for any key usage.
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAnyClientCert,
			VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
				leaf, err := x509.ParseCertificate(raw[0])
				if err != nil {
					return err
				}
				_, err = leaf.Verify(x509.VerifyOptions{Roots: clientCAs, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
				return err
			}},
		ConnState: func(c net.Conn, s http.ConnState) {
			if s == http.StateNew {
				b.conns.Add(1)
			}
		},
		ErrorLog: quietLog(testLogger(t)),
	}
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	return b
}

// verifyingClient trusts only the backends' CA and presents the client
// certificate: a certificate of ramjetd fails its handshake.
func (p *pki) verifyingClient(sni string) *http.Client {
	roots := x509.NewCertPool()
	roots.AddCert(p.backendCA.cert)
	return &http.Client{
		Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{ServerName: sni, RootCAs: roots, Certificates: []tls.Certificate{p.clientCert}},
			DisableKeepAlives: true,
		},
		Timeout: 10 * time.Second,
	}
}

func (p *pki) getVerified(t *testing.T, td *testDaemon, sni string) string {
	t.Helper()
	resp, err := p.verifyingClient(sni).Get("https://" + td.bound.get("https") + "/")
	if err != nil {
		t.Fatalf("GET with SNI %s verifying the backend's certificate: %v", sni, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

func TestPassthroughEndToEnd(t *testing.T) {
	p := newPKI(t)
	b := p.startTLSBackend(t, "backend-0")
	td := startDaemon(t, passthroughConfig, map[string]any{"Passthrough": true, "Members": []string{b.addr}})

	t.Run("the client verifies the backend and the backend the client", func(t *testing.T) {
		if got, want := p.getVerified(t, td, "pass.test"), "backend-0 client=client-1 sni=pass.test"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("a wildcard domain is spliced", func(t *testing.T) {
		if got, want := p.getVerified(t, td, "a.wild.test"), "backend-0 client=client-1 sni=a.wild.test"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
		// A name the wildcard does not cover (two labels) is not.
		if status, body, issuer := getBySNI(t, td.url("https")+"/", "a.b.wild.test", "a.b.wild.test"); status != http.StatusNotFound || issuer != certs.FakeCommonName {
			t.Errorf("a.b.wild.test: %d %q from a certificate of %q, want ramjetd's 404", status, body, issuer)
		}
	})
	t.Run("a terminated host on the same listener", func(t *testing.T) {
		status, body, issuer := getBySNI(t, td.url("https")+"/", "term.test", "term.test")
		if status != http.StatusOK || body != "terminated" || issuer != certs.FakeCommonName {
			t.Errorf("term.test: %d %q from a certificate of %q, want 200 terminated from ramjetd's", status, body, issuer)
		}
	})
	t.Run("plain HTTP of the passthrough host is served by its routes", func(t *testing.T) {
		if status, body, _ := get(t, client(), td.url("http")+"/", "pass.test"); status != http.StatusOK || body != "plain http of pass" {
			t.Errorf("http://pass.test/: %d %q", status, body)
		}
	})
	before := b.conns.Load()
	t.Run("no SNI is terminated", func(t *testing.T) {
		conn, err := tls.Dial("tcp", td.bound.get("https"), &tls.Config{InsecureSkipVerify: true}) // an IP address: no SNI
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if cn := conn.ConnectionState().PeerCertificates[0].Subject.CommonName; cn != certs.FakeCommonName {
			t.Errorf("certificate %q, want ramjetd's", cn)
		}
	})
	t.Run("a garbage ClientHello is terminated", func(t *testing.T) {
		conn, err := net.Dial("tcp", td.bound.get("https"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// A handshake record holding a ClientHello cut short.
		conn.Write([]byte{22, 3, 1, 0, 6, 1, 0, 0, 2, 3, 3})
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(conn)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		// crypto/tls answers with an alert record and closes.
		if len(got) == 0 || got[0] != 21 {
			t.Errorf("answer % x, want a TLS alert from ramjetd's handshake", got)
		}
	})
	t.Run("plain HTTP on the TLS port still gets its answer", func(t *testing.T) {
		resp := rawRequest(t, td.bound.get("https"), "GET / HTTP/1.1\r\nHost: pass.test\r\n\r\n")
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "expects TLS") {
			t.Errorf("plain HTTP to the TLS port: %d %q", resp.StatusCode, body)
		}
	})
	if n := b.conns.Load(); n != before {
		t.Errorf("the backend got %d connections from the terminated cases, want none", n-before)
	}
	t.Run("metrics per application", func(t *testing.T) {
		m := scrape(t, td)
		for _, want := range []string{
			`ramjet_passthrough_connections_total{application="pass",result="spliced",tenant="t"} 2`,
			`ramjet_passthrough_connections_total{application="pass",result="failed",tenant="t"} 0`,
		} {
			if !strings.Contains(m, want) {
				t.Errorf("metrics lack %s:\n%s", want, grepLines(m, "ramjet_passthrough"))
			}
		}
		for _, dir := range []string{"in", "out"} {
			line := grepLines(m, `ramjet_passthrough_bytes_total{application="pass",direction="`+dir+`"`)
			if line == "" || strings.HasSuffix(strings.TrimSpace(line), " 0") {
				t.Errorf("bytes %s: %q, want a positive count", dir, line)
			}
		}
	})
}

func TestPassthroughReloadKeepsSplicedConnections(t *testing.T) {
	p := newPKI(t)
	b := p.startTLSBackend(t, "backend-0")
	data := map[string]any{"Passthrough": true, "Members": []string{b.addr}}
	td := startDaemon(t, passthroughConfig, data)
	roots := x509.NewCertPool()
	roots.AddCert(p.backendCA.cert)
	conn, err := tls.Dial("tcp", td.bound.get("https"), &tls.Config{ServerName: "pass.test", RootCAs: roots, Certificates: []tls.Certificate{p.clientCert}})
	if err != nil {
		t.Fatalf("spliced handshake: %v", err)
	}
	defer conn.Close()

	data["Passthrough"] = false
	td.write(t, passthroughConfig, data)
	td.reload(t)

	// A new connection is terminated now...
	if status, body, issuer := getBySNI(t, td.url("https")+"/", "pass.test", "pass.test"); status != http.StatusOK || body != "plain http of pass" || issuer != certs.FakeCommonName {
		t.Errorf("after the reload: %d %q from a certificate of %q, want the route's answer from ramjetd", status, body, issuer)
	}
	// ...and the one spliced before goes on.
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: pass.test\r\nConnection: close\r\n\r\n")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the connection spliced before the reload: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if got, want := string(body), "backend-0 client=client-1 sni=pass.test"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestPassthroughMembersWithoutReload(t *testing.T) {
	p := newPKI(t)
	b0, b1 := p.startTLSBackend(t, "backend-0"), p.startTLSBackend(t, "backend-1")
	td := startDaemon(t, passthroughConfig, map[string]any{"Passthrough": true, "Members": []string{b0.addr}})
	gen := td.current.Load().number
	if got := p.getVerified(t, td, "pass.test"); !strings.HasPrefix(got, "backend-0 ") {
		t.Fatalf("before the update: %q, want backend-0", got)
	}
	if err := td.admin.SetMembers(context.Background(), "p", []config.Member{{Address: b1.addr}}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if got := p.getVerified(t, td, "pass.test"); !strings.HasPrefix(got, "backend-1 ") {
			t.Errorf("after the update: %q, want backend-1", got)
		}
	}
	if now := td.current.Load().number; now != gen {
		t.Errorf("generation %d, want %d: the update reloaded", now, gen)
	}
	// Two members: the connections are balanced over both.
	if err := td.admin.SetMembers(context.Background(), "p", []config.Member{{Address: b0.addr}, {Address: b1.addr}}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 4 {
		seen[strings.Fields(p.getVerified(t, td, "pass.test"))[0]] = true
	}
	if !seen["backend-0"] || !seen["backend-1"] {
		t.Errorf("backends seen %v, want both", seen)
	}
	// An empty pool closes the connection without terminating it.
	if err := td.admin.SetMembers(context.Background(), "p", []config.Member{}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.verifyingClient("pass.test").Get("https://" + td.bound.get("https") + "/"); err == nil {
		t.Error("a passthrough host without members was served")
	}
	if m := scrape(t, td); !strings.Contains(m, `ramjet_passthrough_connections_total{application="pass",result="failed",tenant="t"} 1`) {
		t.Errorf("the failed splice is not counted:\n%s", grepLines(m, "ramjet_passthrough"))
	}
}

// rawMember accepts one connection, reads it to its end and answers
// how many bytes it read, then closes.
func rawMember(t *testing.T) (string, <-chan []byte) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		fmt.Fprintf(c, "read %d bytes", len(b))
		got <- b
	}()
	return ln.Addr().String(), got
}

// clientHello returns the first flight crypto/tls sends for sni.
func clientHello(t *testing.T, sni string) []byte { return clientHelloB(t, sni) }

func TestPassthroughHalfCloseAndExactBytes(t *testing.T) {
	addr, got := rawMember(t)
	td := startDaemon(t, passthroughConfig, map[string]any{"Passthrough": true, "Members": []string{addr}})
	hello := clientHello(t, "pass.test")
	payload := append(hello, []byte("after the hello")...)
	conn, err := net.Dial("tcp", td.bound.get("https"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write(payload)
	conn.(*net.TCPConn).CloseWrite()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	answer, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("reading the member's answer after the half-close: %v", err)
	}
	if want := fmt.Sprintf("read %d bytes", len(payload)); string(answer) != want {
		t.Errorf("answer %q, want %q", answer, want)
	}
	select {
	case b := <-got:
		if string(b) != string(payload) {
			t.Errorf("the member read %d bytes differing from the %d sent", len(b), len(payload))
		}
	case <-time.After(5 * time.Second):
		t.Error("the member read nothing")
	}
}

func TestPassthroughIdleTimeout(t *testing.T) {
	p := newPKI(t)
	b := p.startTLSBackend(t, "backend-0")
	td := startDaemon(t, passthroughConfig, map[string]any{"Passthrough": true, "Idle": "300ms", "Members": []string{b.addr}})
	roots := x509.NewCertPool()
	roots.AddCert(p.backendCA.cert)
	conn, err := tls.Dial("tcp", td.bound.get("https"), &tls.Config{ServerName: "pass.test", RootCAs: roots, Certificates: []tls.Certificate{p.clientCert}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = conn.Read(make([]byte, 1))
	var ne net.Error
	switch {
	case err == nil:
		t.Fatal("the silent connection got bytes")
	case errorsAs(err, &ne) && ne.Timeout():
		t.Fatalf("the silent connection stayed open for %v", time.Since(start))
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("closed after %v, before the idle timeout of 300ms", d)
	}
}

func errorsAs(err error, target *net.Error) bool {
	ne, ok := err.(net.Error)
	if ok {
		*target = ne
	}
	return ok
}

func TestPassthroughConfigValidation(t *testing.T) {
	cfg := &config.Config{
		Server: config.Server{Listeners: map[string]*config.Listener{"https": {Address: ":443", TLS: &config.ListenerTLS{}}}},
		Tenants: map[string]*config.Tenant{"t": {
			Applications: map[string]*config.Application{"a": {Domains: []string{"a.test"}, Passthrough: &config.Passthrough{Pool: "missing"}}},
		}},
	}
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), `tenants.t.applications.a.passthrough.pool: no pool "missing" in this tenant`) {
		t.Errorf("Validate: %v, want the passthrough pool named", err)
	}
}

// BenchmarkPassthroughThroughput streams 64 KiB chunks from a client
// through a spliced connection to a member that reads them to the end:
// the bytes per second ramjetd splices on loopback.
func BenchmarkPassthroughThroughput(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				n, _ := io.Copy(io.Discard, c)
				fmt.Fprintf(c, "%d", n)
			}()
		}
	}()
	td := startDaemon(b, passthroughConfig, map[string]any{"Passthrough": true, "Members": []string{ln.Addr().String()}})
	hello := clientHelloB(b, "pass.test")
	conn, err := net.Dial("tcp", td.bound.get("https"))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	conn.Write(hello)
	chunk := make([]byte, 64<<10)
	b.SetBytes(int64(len(chunk)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := conn.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
	conn.(*net.TCPConn).CloseWrite()
	answer, _ := io.ReadAll(conn)
	b.StopTimer()
	if len(answer) == 0 {
		b.Fatal("the member did not answer")
	}
}

func clientHelloB(tb testing.TB, sni string) []byte {
	a, c := net.Pipe()
	go tls.Client(a, &tls.Config{ServerName: sni}).Handshake()
	defer a.Close()
	defer c.Close()
	buf := make([]byte, 64<<10)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := c.Read(buf)
	if err != nil {
		tb.Fatal(err)
	}
	return buf[:n]
}
