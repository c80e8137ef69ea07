package config

import (
	"fmt"
	"net"
	"strconv"
	"time"
)

// Memcached is where the global rate limits (Policies.GlobalRateLimit)
// keep their counts, shared by every ramjetd that names the same servers.
// A request never waits long for it: each operation is bounded by Timeout,
// and a request that cannot be counted passes (fail open), as
// ingress-nginx's global rate limits do.
type Memcached struct {
	// Addresses are the memcached servers, host:port each; a key's counts
	// live on one of them, chosen by the key's hash. Names are resolved at
	// each new connection. Required, at most MaxMemcachedAddresses.
	Addresses []string `yaml:"addresses" json:"addresses"`
	// Timeout bounds connecting to a server and each read and write of one
	// operation (ingress-nginx's global-rate-limit-memcached-connect-timeout);
	// a request makes two operations (read, increment), at most four.
	// Zero means
	// DefaultMemcachedTimeout; at most MaxMemcachedTimeout.
	Timeout Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	// PoolSize is how many idle connections are kept open to each server
	// (global-rate-limit-memcached-pool-size). Zero means
	// DefaultMemcachedPoolSize; at most MaxMemcachedPoolSize.
	PoolSize int `yaml:"pool_size,omitempty" json:"pool_size,omitempty"`
}

// Defaults and bounds of Memcached.
const (
	DefaultMemcachedTimeout  = 50 * time.Millisecond
	MaxMemcachedTimeout      = 5 * time.Second
	DefaultMemcachedPoolSize = 50
	MaxMemcachedPoolSize     = 10_000
	MaxMemcachedAddresses    = 64
)

// GlobalRateLimit limits the requests of each key (by default the client
// address) to Limit per Window, counted in memcached (server.memcached) so
// that every replica shares the counts, with the approximate sliding window
// of lua-resty-global-throttle, which ingress-nginx uses. A refused request
// gets Status. Counts are kept per Namespace: routes naming the same one
// share them.
type GlobalRateLimit struct {
	// Namespace prefixes the memcached keys of the counts: letters, digits,
	// '.', '_' and '-', at most MaxGlobalRateLimitNamespace bytes. Required.
	// The controller uses the Ingress's UID without dashes, as ingress-nginx.
	Namespace string `yaml:"namespace" json:"namespace"`
	// Limit is how many requests each key may make per Window,
	// 1..MaxGlobalRateLimit.
	Limit uint32 `yaml:"limit" json:"limit"`
	// Window is the length of a counting window, in whole seconds, from 1s
	// to MaxGlobalRateLimitWindow.
	Window Duration `yaml:"window" json:"window"`
	// Key is what requests are counted by: the values of its parts one
	// after the other. Empty, or a value that is empty for a request,
	// counts by the client address. At most MaxGlobalRateLimitKeyParts.
	Key []KeyPart `yaml:"key,omitempty" json:"key,omitempty"`
	// IgnoredRanges are the client addresses (CIDRs or single addresses)
	// that are not counted nor limited. At most 1024 entries.
	IgnoredRanges []string `yaml:"ignored_ranges,omitempty" json:"ignored_ranges,omitempty"`
	// Status answers the refused requests, 400..599; zero means 429
	// (ingress-nginx's global-rate-limit-status-code default).
	Status int `yaml:"status,omitempty" json:"status,omitempty"`
}

// KeyPart is one part of a GlobalRateLimit key; exactly one field is set.
type KeyPart struct {
	// Text is a fixed text, at most 256 bytes, printable.
	Text string `yaml:"text,omitempty" json:"text,omitempty"`
	// ClientAddress is the client's address (nginx's $remote_addr): the
	// peer's, or the one a trusted proxy reports.
	ClientAddress bool `yaml:"client_address,omitempty" json:"client_address,omitempty"`
	// Header is the value of this request header (nginx's $http_<name>),
	// the first one when it is repeated; empty when absent.
	Header string `yaml:"header,omitempty" json:"header,omitempty"`
	// Cookie is the value of this request cookie (nginx's
	// $cookie_<name>); empty when absent.
	Cookie string `yaml:"cookie,omitempty" json:"cookie,omitempty"`
}

// Bounds of GlobalRateLimit.
const (
	MaxGlobalRateLimit           = 1_000_000_000
	MaxGlobalRateLimitWindow     = 7 * 24 * time.Hour
	MaxGlobalRateLimitNamespace  = 100
	MaxGlobalRateLimitKeyParts   = 16
	maxGlobalRateLimitKeyText    = 256
	DefaultGlobalRateLimitStatus = 429
)

// StatusOr429 is Status with its default.
func (g *GlobalRateLimit) StatusOr429() int {
	if g.Status == 0 {
		return DefaultGlobalRateLimitStatus
	}
	return g.Status
}

func (m *Memcached) validate(l *errorList, path string) {
	if len(m.Addresses) == 0 {
		l.add(path+".addresses", "at least one host:port is required")
	}
	if len(m.Addresses) > MaxMemcachedAddresses {
		l.add(path+".addresses", "at most %d entries", MaxMemcachedAddresses)
	}
	for i, a := range m.Addresses {
		if err := checkHostPort(a); err != nil {
			l.add(fmt.Sprintf("%s.addresses[%d]", path, i), "%v", err)
		}
	}
	if m.Timeout < 0 || m.Timeout.Std() > MaxMemcachedTimeout {
		l.add(path+".timeout", "must be 0 (%s) up to %s", DefaultMemcachedTimeout, MaxMemcachedTimeout)
	}
	if m.PoolSize < 0 || m.PoolSize > MaxMemcachedPoolSize {
		l.add(path+".pool_size", "must be 0 (%d) up to %d", DefaultMemcachedPoolSize, MaxMemcachedPoolSize)
	}
}

// checkHostPort accepts host:port with a port 1..65535 and a host of
// letters, digits, '.', '-', or an IP address.
func checkHostPort(a string) error {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return fmt.Errorf("%q is not host:port", a)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: port must be 1..65535", a)
	}
	if net.ParseIP(host) != nil {
		return nil
	}
	if host == "" || len(host) > 253 {
		return fmt.Errorf("%q: host must be a name or an IP address", a)
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return fmt.Errorf("%q: host must be a name or an IP address", a)
		}
	}
	return nil
}

func (g *GlobalRateLimit) validate(l *errorList, path string, srv *Server) {
	if srv != nil && srv.Memcached == nil {
		l.add(path, "needs server.memcached, where its counts are kept")
	}
	if g.Namespace == "" || len(g.Namespace) > MaxGlobalRateLimitNamespace {
		l.add(path+".namespace", "is required, at most %d bytes", MaxGlobalRateLimitNamespace)
	}
	for i := 0; i < len(g.Namespace); i++ {
		if c := g.Namespace[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			l.add(path+".namespace", "must hold only letters, digits, '.', '_' and '-'")
			break
		}
	}
	if g.Limit < 1 || g.Limit > MaxGlobalRateLimit {
		l.add(path+".limit", "must be 1..%d", MaxGlobalRateLimit)
	}
	if g.Window.Std() < time.Second || g.Window.Std() > MaxGlobalRateLimitWindow || g.Window.Std()%time.Second != 0 {
		l.add(path+".window", "must be whole seconds, 1s..%s", MaxGlobalRateLimitWindow)
	}
	if len(g.Key) > MaxGlobalRateLimitKeyParts {
		l.add(path+".key", "at most %d parts", MaxGlobalRateLimitKeyParts)
	}
	for i, p := range g.Key {
		p.validate(l, fmt.Sprintf("%s.key[%d]", path, i))
	}
	validateRanges(l, path+".ignored_ranges", g.IgnoredRanges)
	if g.Status != 0 && (g.Status < 400 || g.Status > 599) {
		l.add(path+".status", "must be 400..599 (0 means 429), not %d", g.Status)
	}
}

func (p KeyPart) validate(l *errorList, path string) {
	set := 0
	for _, on := range []bool{p.Text != "", p.ClientAddress, p.Header != "", p.Cookie != ""} {
		if on {
			set++
		}
	}
	if set != 1 {
		l.add(path, "exactly one of text, client_address, header and cookie must be set")
		return
	}
	switch {
	case len(p.Text) > maxGlobalRateLimitKeyText:
		l.add(path+".text", "at most %d bytes", maxGlobalRateLimitKeyText)
	case p.Text != "":
		for i := 0; i < len(p.Text); i++ {
			if c := p.Text[i]; c < 0x20 || c == 0x7f {
				l.add(path+".text", "must be printable")
				break
			}
		}
	case p.Header != "":
		l.addErr(path+".header", ValidateHeaderName(p.Header))
	case p.Cookie != "":
		l.addErr(path+".cookie", ValidateCookieName(p.Cookie))
	}
}

// Check validates m alone, as server.memcached: how the controller checks
// its flags before it renders a configuration.
func (m *Memcached) Check() error {
	var l errorList
	m.validate(&l, "server.memcached")
	return l.result()
}
