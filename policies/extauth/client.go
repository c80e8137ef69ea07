package extauth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/certs"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/upstream"
)

// client sends subrequests to the service over HTTP/1.1, the protocol of
// nginx's auth location. Without keepalive each subrequest has its own
// connection (ingress-nginx's default); with it, idle connections are kept
// and each is closed after maxRequests subrequests.
type client struct {
	transport   *http.Transport
	maxRequests int64 // 0: connections are not reused
}

// newClient builds the client to the service of the URL u; self, when not
// nil, gives the address of ramjetd's own listener every subrequest goes
// to instead.
func newClient(cfg *config.ExternalAuth, u *config.AuthURLParts, self func() string, loopback bool, connect, response time.Duration) (*client, error) {
	dialer := &net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second, ControlContext: addressRule(loopback)}
	dial := dialer.DialContext
	if self != nil {
		dialer.ControlContext = nil // ramjetd's own listener, not an address of the configuration
		dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, self())
		}
	}
	t := &http.Transport{
		Proxy:                  nil, // never an environment proxy
		DialContext:            dial,
		ResponseHeaderTimeout:  response,
		MaxResponseHeaderBytes: upstream.MaxResponseHeaderBytes,
		DisableCompression:     true,
		DisableKeepAlives:      true,
	}
	c := &client{transport: t}
	if k := cfg.Keepalive; k != nil && k.Connections > 0 {
		t.DisableKeepAlives = false
		t.MaxIdleConnsPerHost = k.Connections
		t.IdleConnTimeout = k.IdleTimeout.Or(config.DefaultAuthKeepaliveIdle)
		c.maxRequests = int64(k.Requests)
		if c.maxRequests == 0 {
			c.maxRequests = config.DefaultAuthKeepaliveReqs
		}
		t.DialContext = countedDial(dial)
	}
	switch {
	case u.Scheme == "https" && self != nil:
		t.DialTLSContext = selfTLSDial(t.DialContext, connect)
	case u.Scheme == "https":
		tlsConfig, err := tlsConfigOf(cfg.TLS, u.Host)
		if err != nil {
			return nil, err
		}
		t.DialTLSContext = tlsDial(t.DialContext, tlsConfig, connect)
	}
	return c, nil
}

// selfAddress gives the address of the listener a self subrequest goes to
// (config.ExternalAuth.Self), nil without self: the address the listener
// is bound to (or else its configured one), loopback when it listens on
// every address.
func selfAddress(cfg *config.ExternalAuth, u *config.AuthURLParts, opts Options) (func() string, error) {
	if !cfg.Self {
		return nil, nil
	}
	name := config.SelfListener(opts.Listeners, u.Scheme == "https")
	if name == "" {
		return nil, fmt.Errorf("self: no listener for %s subrequests", u.Scheme)
	}
	configured := opts.Listeners[name].Address
	if _, _, err := net.SplitHostPort(configured); err != nil {
		return nil, fmt.Errorf("self: listener %s: %w", name, err)
	}
	return func() string {
		addr := configured
		if opts.Bound != nil {
			if bound := opts.Bound(name); bound != "" {
				addr = bound
			}
		}
		return loopbackFor(addr)
	}, nil
}

// loopbackFor is addr with an unspecified (or empty) host replaced by the
// loopback address of its family.
func loopbackFor(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	ip, err := netip.ParseAddr(host)
	switch {
	case host == "" || err == nil && ip.Is4() && ip.IsUnspecified():
		host = "127.0.0.1"
	case err == nil && ip.IsUnspecified():
		host = "::1"
	}
	return net.JoinHostPort(host, port)
}

// selfTLSDial connects to ramjetd's own TLS listener with the server name
// of the subrequest's host, so that the listener picks that host's
// certificate and client-certificate rule. The certificate is not
// verified: the address is ramjetd's own.
func selfTLSDial(dial dialFunc, connect time.Duration) dialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		name, _, err := net.SplitHostPort(addr)
		if err != nil {
			name = addr
		}
		c := &tls.Config{ServerName: name, InsecureSkipVerify: true, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
		return tlsDial(dial, c, connect)(ctx, network, addr)
	}
}

// addressRule is the dialer's check of every address it connects to, IP
// literal or resolved: the address rule of members. Its errors wrap
// config.ErrLocalAddress.
func addressRule(loopback bool) func(context.Context, string, string, syscall.RawConn) error {
	return func(_ context.Context, _, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return err
		}
		if err := config.CheckMemberIPLoopback(ap.Addr(), loopback); err != nil {
			return fmt.Errorf("the authentication service's address %w", err)
		}
		return nil
	}
}

// tlsConfigOf is the verification of an https service at hostport.
func tlsConfigOf(t *config.AuthTLS, hostport string) (*tls.Config, error) {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	c := &tls.Config{ServerName: strings.Trim(host, "[]"), MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	if t == nil {
		return c, nil
	}
	if t.ServerName != "" {
		c.ServerName = t.ServerName
	}
	c.InsecureSkipVerify = t.InsecureSkipVerify
	if t.CAFile != "" {
		roots, err := loadRoots(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("tls.ca_file: %w", err)
		}
		c.RootCAs = roots
	}
	return c, nil
}

func loadRoots(path string) (*x509.CertPool, error) {
	data, err := certs.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return certs.LoadCAPool(data)
}

type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// tlsDial connects and completes a verified handshake within connect.
func tlsDial(dial dialFunc, c *tls.Config, connect time.Duration) dialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		raw, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		conn := tls.Client(raw, c)
		hctx, cancel := context.WithTimeout(ctx, connect)
		defer cancel()
		if err := conn.HandshakeContext(hctx); err != nil {
			raw.Close()
			return nil, fmt.Errorf("TLS: %w", err)
		}
		if cc, ok := raw.(*countedConn); ok {
			return &countedConn{Conn: conn, served: cc.served}, nil
		}
		return conn, nil
	}
}

// countedConn is a connection that counts the subrequests it carried.
type countedConn struct {
	net.Conn
	served *atomic.Int64
}

func countedDial(dial dialFunc) dialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countedConn{Conn: c, served: new(atomic.Int64)}, nil
	}
}

// roundTrip sends req. With keepalive, the connection that carried its
// maxRequests-th subrequest is closed once the answer has been read
// (nginx's keepalive_requests). net/http may have put it back among the
// idle connections by then; a subrequest that picks it up in that instant
// fails before sending anything and is retried on another connection, as
// net/http does for every request without a body.
func (c *client) roundTrip(req *http.Request) (*http.Response, error) {
	if c.maxRequests == 0 {
		return c.transport.RoundTrip(req)
	}
	var used *countedConn
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if cc, ok := info.Conn.(*countedConn); ok && cc.served.Add(1) >= c.maxRequests {
			used = cc
		}
	}}
	resp, err := c.transport.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	if err != nil || used == nil {
		return resp, err
	}
	resp.Body = &closeAfter{ReadCloser: resp.Body, conn: used}
	return resp, nil
}

func (c *client) close() { c.transport.CloseIdleConnections() }
