package upstream

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/http1"
)

// IdleConnsPerMember is the number of idle keep-alive connections kept per
// member: the default of ingress-nginx's upstream-keepalive-connections.
// With fewer than the requests a member has in flight at once, every
// request beyond them opens a new connection (at 32, a benchmark of 64
// concurrent clients opened 1,400 connections in 10 s and spent 2.4 times
// nginx's CPU per request); idle ones are closed after 90 s.
const IdleConnsPerMember = 320

// DialError is a failure to connect to a member, TLS handshake included.
// Nothing of the request reached the member, so any method may be retried
// on another one.
type DialError struct {
	Address string
	Err     error
}

func (e *DialError) Error() string { return "connect to " + e.Address + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *DialError) Unwrap() error { return e.Err }

// IsDialError reports whether err is (or wraps) a DialError.
func IsDialError(err error) bool {
	var de *DialError
	return errors.As(err, &de)
}

// transportSettings are the pool settings a transport depends on. Pools with
// equal settings share one transport, and a reload that keeps them keeps the
// transport and its idle connections.
type transportSettings struct {
	scheme           config.Scheme
	serverName       string
	skipVerify       bool   // tls.insecure_skip_verify
	caDigest         string // sha256 of the CA file's content, "" for system roots
	clientCertDigest string // sha256 of the client certificate's chain, "" for none
	connectTimeout   time.Duration
	responseTimeout  time.Duration
	sendTimeout      time.Duration // 0: writes to members are not bounded
	maxHeaderBytes   int64         // 0: MaxResponseHeaderBytes
}

// headLimit is the bound of a member's response head.
func (s transportSettings) headLimit() int64 {
	if s.maxHeaderBytes > 0 {
		return s.maxHeaderBytes
	}
	return MaxResponseHeaderBytes
}

// tlsFiles is what a transport's settings name in files, loaded.
type tlsFiles struct {
	roots      *x509.CertPool   // the authorities of members; nil: the system's
	clientCert *tls.Certificate // presented to members that ask; nil: none
}

// MaxResponseHeaderBytes bounds the head of a member's response: a member
// cannot make ramjetd hold more for one request. nginx's default
// (proxy_buffer_size) is 4 or 8 KiB; net/http's, 10 MiB.
const MaxResponseHeaderBytes = 1 << 20

// idleTimeout closes member connections idle for longer.
const idleTimeout = 90 * time.Second

// Transport sends requests to the members of the pools that share its
// settings. Requests without a body to an HTTP/1.1 member (scheme http or
// https) go through the proxy's own client (package http1), on the calling
// goroutine; the rest (bodies, upgrades, HTTP/2) through net/http.
type Transport struct {
	// HTTP is net/http's transport, for what the fast path does not take.
	HTTP *http.Transport
	fast *http1.Client // nil for HTTP/2 schemes
}

// RoundTrip sends req to the member named by req.URL.Host.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.fast != nil && http1.Eligible(req) {
		return t.fast.RoundTrip(req)
	}
	return t.HTTP.RoundTrip(req)
}

// Close releases a transport no configuration uses any longer: idle
// connections are closed at once, those in use when their response ends.
func (t *Transport) Close() {
	t.HTTP.CloseIdleConnections()
	if t.fast != nil {
		t.fast.Close()
	}
}

func newTransport(s transportSettings, files tlsFiles) *Transport {
	dialer := newMemberDialer(s.connectTimeout, s.sendTimeout)
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.dial(ctx, network, addr)
		if err != nil {
			return nil, &DialError{Address: addr, Err: err}
		}
		return c, nil
	}
	t := &http.Transport{
		Proxy:                  nil, // never an environment proxy
		DialContext:            dial,
		MaxIdleConnsPerHost:    IdleConnsPerMember,
		IdleConnTimeout:        idleTimeout,
		ResponseHeaderTimeout:  s.responseTimeout,
		MaxResponseHeaderBytes: s.headLimit(),
		ExpectContinueTimeout:  time.Second,
		// The proxy forwards bodies as they are; it never asks for or
		// decodes compression on the client's behalf.
		DisableCompression: true,
		Protocols:          protocols(s.scheme),
	}
	if s.scheme.UsesTLS() {
		t.DialTLSContext = tlsDialer(dialer, s, files)
		t.ForceAttemptHTTP2 = s.scheme == config.SchemeH2
	}
	if s.scheme.IsHTTP2() {
		t.HTTP2 = &http.HTTP2Config{}
		return &Transport{HTTP: t}
	}
	fast := &http1.Client{
		Dial:                   dial,
		ResponseHeaderTimeout:  s.responseTimeout,
		MaxIdlePerHost:         IdleConnsPerMember,
		IdleTimeout:            idleTimeout,
		MaxResponseHeaderBytes: s.headLimit(),
	}
	if s.scheme.UsesTLS() {
		fast.Dial = t.DialTLSContext
	}
	return &Transport{HTTP: t, fast: fast}
}

func protocols(s config.Scheme) *http.Protocols {
	p := new(http.Protocols)
	switch s {
	case config.SchemeH2C:
		p.SetUnencryptedHTTP2(true)
	case config.SchemeH2:
		p.SetHTTP2(true)
	default:
		p.SetHTTP1(true)
	}
	return p
}

// tlsDialer connects and completes a TLS handshake, verified unless the
// pool says insecure_skip_verify, so that a member with a certificate we do
// not trust is a DialError like a refused connection. A client certificate is presented to a member that asks for
// one, whatever authorities it names (as nginx's proxy_ssl_certificate):
// the member is the judge of it.
func tlsDialer(dialer *memberDialer, s transportSettings, files tlsFiles) func(context.Context, string, string) (net.Conn, error) {
	alpn := []string{"http/1.1"}
	if s.scheme == config.SchemeH2 {
		alpn = []string{"h2"}
	}
	var clientCert func(*tls.CertificateRequestInfo) (*tls.Certificate, error)
	if files.clientCert != nil {
		clientCert = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return files.clientCert, nil }
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		raw, err := dialer.dial(ctx, network, addr)
		if err != nil {
			return nil, &DialError{Address: addr, Err: err}
		}
		name := s.serverName
		if name == "" {
			name, _, _ = net.SplitHostPort(addr)
		}
		conn := tls.Client(raw, &tls.Config{
			ServerName:           name,
			RootCAs:              files.roots,
			GetClientCertificate: clientCert,
			NextProtos:           alpn,
			MinVersion:           tls.VersionTLS12,
			InsecureSkipVerify:   s.skipVerify,
		})
		hctx, cancel := context.WithTimeout(ctx, s.connectTimeout)
		defer cancel()
		if err := conn.HandshakeContext(hctx); err != nil {
			raw.Close()
			return nil, &DialError{Address: addr, Err: fmt.Errorf("TLS: %w", err)}
		}
		if s.scheme == config.SchemeH2 && conn.ConnectionState().NegotiatedProtocol != "h2" {
			conn.Close()
			return nil, &DialError{Address: addr, Err: errors.New("the member does not offer HTTP/2 over TLS (ALPN h2)")}
		}
		return conn, nil
	}
}

// memberDialer connects to members. A member given by IP address is dialled
// as it is. A member given by DNS name is resolved at each connection (so
// a changed record is followed at once), and each address it resolves to
// passes the address rule (config.CheckMemberIP): a name in the
// configuration (an ExternalName Service, say) must not point the proxy at
// itself, its node or a cloud metadata service.
type memberDialer struct {
	byAddress, byName *net.Dialer
	send              time.Duration // the send timeout; 0 for none
}

func newMemberDialer(timeout, send time.Duration) *memberDialer {
	byAddress := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	byName := *byAddress
	byName.ControlContext = refuseLocalAddresses
	return &memberDialer{byAddress: byAddress, byName: &byName, send: send}
}

func (d *memberDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, _ := net.SplitHostPort(addr)
	dialer := d.byName
	if _, err := netip.ParseAddr(host); err == nil {
		dialer = d.byAddress
	}
	c, err := dialer.DialContext(ctx, network, addr)
	if err != nil || d.send <= 0 {
		return c, err
	}
	return &sendTimeoutConn{Conn: c, timeout: d.send}, nil
}

// sendTimeoutConn bounds the time between two successive writes to a
// member, as nginx's proxy_send_timeout: a write fails with a timeout only
// when the member took none of its bytes for the whole timeout; a member
// that reads slowly but steadily is waited for.
type sendTimeoutConn struct {
	net.Conn
	timeout time.Duration
	// aborted is set while a deadline in the past, which the user of the
	// connection sets to interrupt it, is in force: writes are not resumed.
	aborted atomic.Bool
}

func (c *sendTimeoutConn) Write(p []byte) (int, error) {
	written := 0
	for {
		if c.aborted.Load() {
			return written, os.ErrDeadlineExceeded
		}
		c.Conn.SetWriteDeadline(time.Now().Add(c.timeout))
		n, err := c.Conn.Write(p[written:])
		written += n
		if err == nil || n == 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			return written, err
		}
		// Some bytes went out before the deadline: a new period starts.
	}
}

func (c *sendTimeoutConn) SetDeadline(t time.Time) error {
	c.aborted.Store(!t.IsZero() && time.Until(t) <= 0)
	return c.Conn.SetDeadline(t)
}

func (c *sendTimeoutConn) SetWriteDeadline(t time.Time) error {
	c.aborted.Store(!t.IsZero() && time.Until(t) <= 0)
	return c.Conn.SetWriteDeadline(t)
}

// refuseLocalAddresses is the dialer's check of each address a DNS name
// resolved to; its errors wrap config.ErrLocalAddress.
func refuseLocalAddresses(_ context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return err
	}
	if err := config.CheckMemberIP(ap.Addr()); err != nil {
		return fmt.Errorf("the member's name resolved to %w", err)
	}
	return nil
}
