package upstream

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/certs"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

func TestIsDialError(t *testing.T) {
	de := &DialError{Address: "127.0.0.1:1", Err: errors.New("connection refused")}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{name: "nil", err: nil, want: false},
		{name: "plain", err: errors.New("connect to x"), want: false},
		{name: "direct", err: de, want: true},
		{name: "fmt wrapped", err: fmt.Errorf("round trip: %w", de), want: true},
		{name: "wrapped twice", err: fmt.Errorf("a: %w", fmt.Errorf("b: %w", de)), want: true},
		{name: "url.Error", err: &url.Error{Op: "Get", URL: "http://x", Err: de}, want: true},
		{name: "net.OpError", err: &net.OpError{Op: "read", Net: "tcp", Err: de}, want: true},
		{name: "joined", err: errors.Join(errors.New("x"), de), want: true},
		{name: "fmt without %w", err: fmt.Errorf("round trip: %v", de), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsDialError(tt.err); got != tt.want {
				t.Errorf("IsDialError(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestDialErrorMessage(t *testing.T) {
	inner := errors.New("connection refused")
	de := &DialError{Address: "127.0.0.1:1", Err: inner}
	if got, want := de.Error(), "connect to 127.0.0.1:1: connection refused"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(de, inner) {
		t.Errorf("errors.Is(DialError, inner) = false, want true")
	}
}

func TestTransportSettings(t *testing.T) {
	tests := []struct {
		name         string
		cfg          config.Pool
		wantTimeout  time.Duration
		wantHTTP1    bool
		wantHTTP2    bool
		wantH2C      bool
		wantTLSDial  bool
		wantHTTP2Cfg bool
	}{
		{name: "http defaults", cfg: config.Pool{}, wantTimeout: config.DefaultResponseTimeout, wantHTTP1: true},
		{name: "http timeout", cfg: config.Pool{ResponseTimeout: config.Duration(3 * time.Second)}, wantTimeout: 3 * time.Second, wantHTTP1: true},
		{name: "https", cfg: config.Pool{Scheme: config.SchemeHTTPS}, wantTimeout: config.DefaultResponseTimeout, wantHTTP1: true, wantTLSDial: true},
		{name: "h2c", cfg: config.Pool{Scheme: config.SchemeH2C}, wantTimeout: config.DefaultResponseTimeout, wantH2C: true, wantHTTP2Cfg: true},
		{name: "h2", cfg: config.Pool{Scheme: config.SchemeH2}, wantTimeout: config.DefaultResponseTimeout, wantHTTP2: true, wantTLSDial: true, wantHTTP2Cfg: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			both := mustBuild(t, NewState(), "p", &tt.cfg).Transport
			if fast := both.fast; (fast != nil) != tt.wantHTTP1 {
				t.Errorf("HTTP/1.1 fast path set = %v, want %v", fast != nil, tt.wantHTTP1)
			} else if fast != nil && (fast.ResponseHeaderTimeout != tt.wantTimeout || fast.MaxIdlePerHost != IdleConnsPerMember || fast.IdleTimeout != idleTimeout) {
				t.Errorf("fast path: response timeout %v, idle %d for %v; want %v, %d for %v",
					fast.ResponseHeaderTimeout, fast.MaxIdlePerHost, fast.IdleTimeout, tt.wantTimeout, IdleConnsPerMember, idleTimeout)
			}
			tr := both.HTTP
			if tr.Proxy != nil {
				t.Errorf("Proxy is set, want nil (never an environment proxy)")
			}
			if !tr.DisableCompression {
				t.Errorf("DisableCompression = false, want true")
			}
			if tr.MaxIdleConnsPerHost != IdleConnsPerMember {
				t.Errorf("MaxIdleConnsPerHost = %d, want %d", tr.MaxIdleConnsPerHost, IdleConnsPerMember)
			}
			if tr.MaxResponseHeaderBytes != MaxResponseHeaderBytes || both.fast != nil && both.fast.MaxResponseHeaderBytes != MaxResponseHeaderBytes {
				t.Errorf("response heads not bounded by MaxResponseHeaderBytes")
			}
			if tr.ResponseHeaderTimeout != tt.wantTimeout {
				t.Errorf("ResponseHeaderTimeout = %v, want %v", tr.ResponseHeaderTimeout, tt.wantTimeout)
			}
			p := tr.Protocols
			if p == nil || p.HTTP1() != tt.wantHTTP1 || p.HTTP2() != tt.wantHTTP2 || p.UnencryptedHTTP2() != tt.wantH2C {
				t.Errorf("Protocols = %v, want HTTP1 %v HTTP2 %v UnencryptedHTTP2 %v", p, tt.wantHTTP1, tt.wantHTTP2, tt.wantH2C)
			}
			if (tr.DialTLSContext != nil) != tt.wantTLSDial {
				t.Errorf("DialTLSContext set = %v, want %v", tr.DialTLSContext != nil, tt.wantTLSDial)
			}
			if (tr.HTTP2 != nil) != tt.wantHTTP2Cfg {
				t.Errorf("HTTP2 config set = %v, want %v", tr.HTTP2 != nil, tt.wantHTTP2Cfg)
			}
		})
	}
}

func TestTransportKeyedBySettings(t *testing.T) {
	dir := t.TempDir()
	ca1 := writeCA(t, dir, "ca1.pem", selfSignedPEM(t))
	ca1copy := writeCA(t, dir, "ca1-copy.pem", mustRead(t, ca1))
	ca2 := writeCA(t, dir, "ca2.pem", selfSignedPEM(t))
	base := config.Pool{Scheme: config.SchemeHTTPS, TLS: &config.PoolTLS{CAFile: ca1, ServerName: "a"}}
	tests := []struct {
		name     string
		change   func(c *config.Pool)
		wantSame bool
	}{
		{name: "equal", change: func(c *config.Pool) {}, wantSame: true},
		{name: "same CA content in another file", change: func(c *config.Pool) { c.TLS = &config.PoolTLS{CAFile: ca1copy, ServerName: "a"} }, wantSame: true},
		{name: "members do not matter", change: func(c *config.Pool) { c.Members = members("127.0.0.1:1") }, wantSame: true},
		{name: "retries do not matter", change: func(c *config.Pool) { c.Retries = intp(7) }, wantSame: true},
		{name: "default connect timeout written out", change: func(c *config.Pool) { c.ConnectTimeout = config.Duration(config.DefaultConnectTimeout) }, wantSame: true},
		{name: "other CA", change: func(c *config.Pool) { c.TLS = &config.PoolTLS{CAFile: ca2, ServerName: "a"} }},
		{name: "other server name", change: func(c *config.Pool) { c.TLS = &config.PoolTLS{CAFile: ca1, ServerName: "b"} }},
		{name: "system roots", change: func(c *config.Pool) { c.TLS = &config.PoolTLS{ServerName: "a"} }},
		{name: "other scheme", change: func(c *config.Pool) { c.Scheme = config.SchemeH2 }},
		{name: "other connect timeout", change: func(c *config.Pool) { c.ConnectTimeout = config.Duration(time.Second) }},
		{name: "other response timeout", change: func(c *config.Pool) { c.ResponseTimeout = config.Duration(time.Second) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewState()
			a := base
			b := base
			tt.change(&b)
			pa := mustBuild(t, s, "a", &a)
			pb := mustBuild(t, s, "b", &b)
			if same := pa.Transport == pb.Transport; same != tt.wantSame {
				t.Errorf("same transport = %v, want %v", same, tt.wantSame)
			}
		})
	}
	t.Run("verification off", func(t *testing.T) {
		s := NewState()
		verified := mustBuild(t, s, "a", &config.Pool{Scheme: config.SchemeHTTPS, TLS: &config.PoolTLS{ServerName: "a"}})
		unverified := mustBuild(t, s, "b", &config.Pool{Scheme: config.SchemeHTTPS, TLS: &config.PoolTLS{ServerName: "a", InsecureSkipVerify: true}})
		if verified.Transport == unverified.Transport {
			t.Error("a pool that verifies its members shares the transport of one that does not")
		}
	})
}

// TestIdleConnectionsAcrossCommit checks that a transport still used keeps
// its idle connections across a commit and that one no longer used closes
// them.
func TestIdleConnectionsAcrossCommit(t *testing.T) {
	closed := make(chan struct{}, 10)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			closed <- struct{}{}
		}
	}
	srv.Start()
	defer srv.Close()
	addr := srv.Listener.Addr().String()

	s := NewState()
	cfg := &config.Pool{Members: members(addr)}
	p1 := mustBuild(t, s, "web", cfg)
	s.Commit(map[string]*Pool{"web": p1}, nil)
	if reused := get(t, p1.Transport, addr); reused {
		t.Fatalf("first request reused a connection")
	}

	// Still used: the same transport, and the idle connection is reused.
	p2 := mustBuild(t, s, "web", cfg)
	s.Commit(map[string]*Pool{"web": p2}, nil)
	if p2.Transport != p1.Transport {
		t.Fatalf("transport replaced across a commit that still uses it")
	}
	if reused := get(t, p2.Transport, addr); !reused {
		t.Errorf("request after the commit opened a new connection, want the idle one reused")
	}
	select {
	case <-closed:
		t.Errorf("a connection was closed by a commit that still uses its transport")
	default:
	}

	// No longer used: its idle connection is closed.
	other := mustBuild(t, s, "other", &config.Pool{Scheme: config.SchemeH2C})
	s.Commit(map[string]*Pool{"other": other}, nil)
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
		t.Errorf("the idle connection of a transport no longer used is still open 2s after the commit")
	}
	if p3 := mustBuild(t, s, "web", cfg); p3.Transport == p1.Transport {
		t.Errorf("a released transport was handed out again")
	}
}

// get sends GET / to addr and reports whether the connection was reused.
func get(t *testing.T, tr http.RoundTripper, addr string) (reused bool) {
	t.Helper()
	return getURL(t, tr, "http://"+addr+"/")
}

func getURL(t *testing.T, tr http.RoundTripper, u string) (reused bool) {
	t.Helper()
	resp, err := roundTrip(tr, u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: status %d, want 200", u, resp.StatusCode)
	}
	return resp.Request.Header.Get("X-Reused") == "true"
}

func roundTrip(tr http.RoundTripper, u string) (*http.Response, error) {
	var reused bool
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}
	ctx, cancel := context.WithTimeout(httptrace.WithClientTrace(context.Background(), trace), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(strings.NewReader(string(body)))
	if reused {
		req.Header.Set("X-Reused", "true")
	}
	resp.Request = req
	return resp, err
}

func selfSignedPEM(t *testing.T) []byte {
	t.Helper()
	c, err := certs.SelfSigned("other", "example.com")
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]})
}

func writeCA(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDial(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) })
	server := func(configure func(*httptest.Server)) *httptest.Server {
		srv := httptest.NewUnstartedServer(h)
		srv.Config.ErrorLog = quietLog
		configure(srv)
		t.Cleanup(srv.Close)
		return srv
	}
	tlsSrv := server(func(s *httptest.Server) { s.StartTLS() })
	h2Srv := server(func(s *httptest.Server) {
		s.EnableHTTP2 = true
		s.StartTLS()
	})
	h2cSrv := server(func(s *httptest.Server) {
		s.Config.Protocols = new(http.Protocols)
		s.Config.Protocols.SetHTTP1(true)
		s.Config.Protocols.SetUnencryptedHTTP2(true)
		s.Start()
	})
	plainSrv := server(func(s *httptest.Server) { s.Start() })
	// A TLS member that negotiates no application protocol at all.
	noALPN, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: tlsSrv.TLS.Certificates})
	if err != nil {
		t.Fatal(err)
	}
	noALPNSrv := &http.Server{Handler: h, ErrorLog: quietLog}
	go noALPNSrv.Serve(noALPN)
	defer noALPNSrv.Close()

	dir := t.TempDir()
	rightCA := writeCA(t, dir, "right.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}))
	wrongCA := writeCA(t, dir, "wrong.pem", selfSignedPEM(t))
	closedAddr := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		a := l.Addr().String()
		l.Close()
		return a
	}()

	tests := []struct {
		name      string
		cfg       config.Pool
		url       string
		wantProto string // the body, when the request succeeds
		wantDial  string // part of the DialError's message, when it fails
	}{
		{name: "http", cfg: config.Pool{}, url: plainSrv.URL, wantProto: "HTTP/1.1"},
		{name: "http refused", cfg: config.Pool{}, url: "http://" + closedAddr, wantDial: "connect to " + closedAddr},
		{name: "https right CA", cfg: config.Pool{Scheme: config.SchemeHTTPS, TLS: &config.PoolTLS{CAFile: rightCA}},
			url: tlsSrv.URL, wantProto: "HTTP/1.1"},
		{name: "https right CA and server name", cfg: config.Pool{Scheme: config.SchemeHTTPS, TLS: &config.PoolTLS{CAFile: rightCA, ServerName: "example.com"}},
			url: tlsSrv.URL, wantProto: "HTTP/1.1"},
		{name: "https wrong server name", cfg: config.Pool{Scheme: config.SchemeHTTPS, TLS: &config.PoolTLS{CAFile: rightCA, ServerName: "wrong.test"}},
			url: tlsSrv.URL, wantDial: "TLS: "},
		{name: "https wrong CA", cfg: config.Pool{Scheme: config.SchemeHTTPS, TLS: &config.PoolTLS{CAFile: wrongCA}},
			url: tlsSrv.URL, wantDial: "TLS: "},
		{name: "https system roots", cfg: config.Pool{Scheme: config.SchemeHTTPS},
			url: tlsSrv.URL, wantDial: "TLS: "},
		{name: "https refused", cfg: config.Pool{Scheme: config.SchemeHTTPS, TLS: &config.PoolTLS{CAFile: rightCA}},
			url: "https://" + closedAddr, wantDial: "connect to " + closedAddr},
		{name: "https to a plain server", cfg: config.Pool{Scheme: config.SchemeHTTPS, TLS: &config.PoolTLS{CAFile: rightCA}},
			url: "https://" + plainSrv.Listener.Addr().String(), wantDial: "TLS: "},
		{name: "h2", cfg: config.Pool{Scheme: config.SchemeH2, TLS: &config.PoolTLS{CAFile: rightCA}},
			url: h2Srv.URL, wantProto: "HTTP/2.0"},
		{name: "h2 to a member offering only http/1.1", cfg: config.Pool{Scheme: config.SchemeH2, TLS: &config.PoolTLS{CAFile: rightCA}},
			url: tlsSrv.URL, wantDial: "TLS: "},
		{name: "h2 to a member without ALPN", cfg: config.Pool{Scheme: config.SchemeH2, TLS: &config.PoolTLS{CAFile: rightCA}},
			url: "https://" + noALPN.Addr().String(), wantDial: "does not offer HTTP/2 over TLS (ALPN h2)"},
		{name: "https to a member without ALPN", cfg: config.Pool{Scheme: config.SchemeHTTPS, TLS: &config.PoolTLS{CAFile: rightCA}},
			url: "https://" + noALPN.Addr().String(), wantProto: "HTTP/1.1"},
		{name: "h2c", cfg: config.Pool{Scheme: config.SchemeH2C}, url: h2cSrv.URL, wantProto: "HTTP/2.0"},
		// insecure_skip_verify (nginx's proxy_ssl_verify off) accepts any
		// certificate, for any name; the member is still reached over TLS.
		{name: "https without verification", cfg: config.Pool{Scheme: config.SchemeHTTPS, TLS: &config.PoolTLS{InsecureSkipVerify: true}},
			url: tlsSrv.URL, wantProto: "HTTP/1.1"},
		{name: "https without verification, another name", cfg: config.Pool{Scheme: config.SchemeHTTPS, TLS: &config.PoolTLS{InsecureSkipVerify: true, ServerName: "wrong.test"}},
			url: tlsSrv.URL, wantProto: "HTTP/1.1"},
		{name: "https without verification to a plain server", cfg: config.Pool{Scheme: config.SchemeHTTPS, TLS: &config.PoolTLS{InsecureSkipVerify: true}},
			url: "https://" + plainSrv.Listener.Addr().String(), wantDial: "TLS: "},
		{name: "h2 without verification", cfg: config.Pool{Scheme: config.SchemeH2, TLS: &config.PoolTLS{InsecureSkipVerify: true}},
			url: h2Srv.URL, wantProto: "HTTP/2.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := mustBuild(t, NewState(), "p", &tt.cfg).Transport
			defer tr.Close()
			resp, err := roundTrip(tr, tt.url+"/")
			if tt.wantDial != "" {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("request succeeded, want a DialError containing %q", tt.wantDial)
				}
				var de *DialError
				if !errors.As(err, &de) {
					t.Fatalf("error = %v (%T), want a *DialError", err, err)
				}
				if !strings.Contains(de.Error(), tt.wantDial) {
					t.Errorf("DialError = %q, want it to contain %q", de, tt.wantDial)
				}
				return
			}
			if err != nil {
				t.Fatalf("request failed: %v", err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if string(body) != tt.wantProto {
				t.Errorf("member saw %q, want %q", body, tt.wantProto)
			}
		})
	}
}

// TestHandshakeTimeout checks that a member that accepts but never
// completes the TLS handshake is a DialError within the connect timeout.
func TestHandshakeTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, silent, until the test ends
		}
	}()
	tr := mustBuild(t, NewState(), "p", &config.Pool{Scheme: config.SchemeHTTPS, ConnectTimeout: config.Duration(100 * time.Millisecond)}).Transport
	start := time.Now()
	_, err = roundTrip(tr, "https://"+l.Addr().String()+"/")
	if !IsDialError(err) {
		t.Fatalf("error = %v, want a DialError", err)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("error = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the handshake gave up after %v, want about the connect timeout (100ms)", d)
	}
}

// quietLog keeps the test servers' handshake errors, which the tests cause
// on purpose, out of the output.
var quietLog = log.New(io.Discard, "", 0)

// TestMemberNamesMayNotLeadToLocalAddresses dials a member given as
// "localhost": the name resolves to loopback, which a name may not lead to,
// while the same member given as 127.0.0.1 is dialled.
func TestMemberNamesMayNotLeadToLocalAddresses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	d := newMemberDialer(time.Second, 0)
	c, err := d.dial(context.Background(), "tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatalf("dial by address: %v", err)
	}
	c.Close()
	_, err = d.dial(context.Background(), "tcp", "localhost:"+port)
	if !errors.Is(err, config.ErrLocalAddress) {
		t.Errorf("dial localhost: %v, want config.ErrLocalAddress", err)
	}
	// The results of names pass the one address rule (config.CheckMemberIP).
	for _, addr := range []string{"169.254.169.254:80", "[fe80::1]:80", "0.0.0.0:80", "[::1]:80", "[::ffff:127.0.0.1]:80", "0.1.2.3:80", "[::]:80", "224.0.0.251:80", "10.1.2.3:80"} {
		ap := netip.MustParseAddrPort(addr)
		err := refuseLocalAddresses(context.Background(), "tcp", ap.String(), nil)
		if refused := err != nil; refused != (ap.Addr() != netip.MustParseAddr("10.1.2.3")) {
			t.Errorf("%s: refused %t", addr, refused)
		}
	}
}
