package proxy

import (
	"cmp"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/balancer"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
	"github.com/ramjet-dev/ramjet/dataplane/upstream"
)

// buildPool builds a pool in a fresh State with the members at addrs.
func buildPool(t testing.TB, cfg config.Pool, addrs ...string) *upstream.Pool {
	t.Helper()
	for _, a := range addrs {
		cfg.Members = append(cfg.Members, config.Member{Address: a})
	}
	p, err := upstream.NewState().Build("test", &cfg)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	t.Cleanup(p.Transport.Close)
	return p
}

func hashPool(t *testing.T, h config.Hash) *upstream.Pool {
	return buildPool(t, config.Pool{Balance: config.BalanceHash, Hash: &h}, "127.0.0.1:1", "127.0.0.1:2")
}

func exchangeFor(r *http.Request) *exchange.Request {
	return &exchange.Request{
		HTTP: r, Path: r.URL.Path,
		ClientIP: netip.MustParseAddr("192.0.2.10"), Peer: netip.MustParseAddr("192.0.2.10"),
		Scheme: "http", Port: "80",
	}
}

func TestHashKeyNotHash(t *testing.T) {
	for _, balance := range []config.Balance{config.BalanceRoundRobin, config.BalanceLeastConn} {
		p := buildPool(t, config.Pool{Balance: balance}, "127.0.0.1:1")
		key, cookie := hashKey(p, exchangeFor(httptest.NewRequest("GET", "/", nil)))
		if key != 0 || cookie != "" {
			t.Errorf("%s: hashKey = (%d, %q), want (0, \"\")", balance, key, cookie)
		}
	}
}

func TestHashKeyClientIP(t *testing.T) {
	p := hashPool(t, config.Hash{By: config.HashByClientIP})
	tests := []struct {
		name string
		ip   string
	}{
		{name: "IPv4", ip: "192.0.2.10"},
		{name: "IPv6", ip: "2001:db8::10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := exchangeFor(httptest.NewRequest("GET", "/", nil))
			x.ClientIP = netip.MustParseAddr(tt.ip)
			ip := x.ClientIP.As16()
			key, cookie := hashKey(p, x)
			if want := balancer.HashBytes(ip[:]); key != want || cookie != "" {
				t.Errorf("hashKey = (%d, %q), want (%d, \"\")", key, cookie, want)
			}
		})
	}
	x1 := exchangeFor(httptest.NewRequest("GET", "/", nil))
	x2 := exchangeFor(httptest.NewRequest("GET", "/", nil))
	x2.ClientIP = netip.MustParseAddr("192.0.2.11")
	if k1, _ := hashKey(p, x1); k1 == mustKey(hashKey(p, x2)) {
		t.Errorf("two client addresses have the same key %d", k1)
	}
}

func mustKey(k uint64, _ string) uint64 { return k }

func TestHashKeyHeader(t *testing.T) {
	p := hashPool(t, config.Hash{By: config.HashByHeader, Header: "X-User"})
	tests := []struct {
		name   string
		value  string // "" for no header
		stable bool
	}{
		{name: "present", value: "alice", stable: true},
		{name: "absent", value: "", stable: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys := map[uint64]bool{}
			for range 5 {
				r := httptest.NewRequest("GET", "/", nil)
				if tt.value != "" {
					r.Header.Set("x-user", tt.value)
				}
				key, cookie := hashKey(p, exchangeFor(r))
				if cookie != "" {
					t.Errorf("Set-Cookie = %q, want none", cookie)
				}
				if tt.stable && key != balancer.HashKey(tt.value) {
					t.Errorf("key = %d, want HashKey(%q) = %d", key, tt.value, balancer.HashKey(tt.value))
				}
				keys[key] = true
			}
			if tt.stable && len(keys) != 1 {
				t.Errorf("%d different keys for the same header, want 1", len(keys))
			}
			if !tt.stable && len(keys) < 2 {
				t.Errorf("the same key for every request without the header, want a random point each time")
			}
		})
	}
}

func TestHashKeyCookie(t *testing.T) {
	tests := []struct {
		name       string
		cookie     *config.AffinityCookie // nil for the defaults
		scheme     string
		sent       string // Cookie header, "" for none
		wantKeyOf  string // the key is HashKey of this value ("" when a cookie is set)
		wantSet    bool
		wantName   string
		wantPath   string
		wantDomain string
		wantMaxAge int
		wantSecure bool
		wantSame   http.SameSite
	}{
		{name: "existing cookie", sent: "a=1; INGRESSCOOKIE=abc", wantKeyOf: "abc"},
		{name: "existing quoted cookie", sent: `INGRESSCOOKIE="abc"`, wantKeyOf: "abc"},
		{name: "existing named cookie", cookie: &config.AffinityCookie{Name: "sid"}, sent: "sid=zz", wantKeyOf: "zz"},
		{name: "missing, defaults", wantSet: true, wantName: "INGRESSCOOKIE", wantPath: "/"},
		{name: "other cookie only", sent: "a=1", wantSet: true, wantName: "INGRESSCOOKIE", wantPath: "/"},
		{name: "empty value counts as missing", sent: "INGRESSCOOKIE=", wantSet: true, wantName: "INGRESSCOOKIE", wantPath: "/"},
		{name: "missing on https", scheme: "https", wantSet: true, wantName: "INGRESSCOOKIE", wantPath: "/", wantSecure: true},
		{name: "missing, configured", cookie: &config.AffinityCookie{Name: "sid", Path: "/app", Domain: "example.com",
			MaxAge: config.Duration(2 * time.Hour), Secure: true, SameSite: "Lax"},
			wantSet: true, wantName: "sid", wantPath: "/app", wantDomain: "example.com", wantMaxAge: 7200, wantSecure: true, wantSame: http.SameSiteLaxMode},
		{name: "SameSite Strict", cookie: &config.AffinityCookie{SameSite: "Strict"},
			wantSet: true, wantName: "INGRESSCOOKIE", wantPath: "/", wantSame: http.SameSiteStrictMode},
		{name: "SameSite None", cookie: &config.AffinityCookie{SameSite: "None", Secure: true},
			wantSet: true, wantName: "INGRESSCOOKIE", wantPath: "/", wantSecure: true, wantSame: http.SameSiteNoneMode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := hashPool(t, config.Hash{By: config.HashByCookie, Cookie: tt.cookie})
			r := httptest.NewRequest("GET", "/", nil)
			if tt.sent != "" {
				r.Header.Set("Cookie", tt.sent)
			}
			x := exchangeFor(r)
			if tt.scheme != "" {
				x.Scheme = tt.scheme
			}
			key, setCookie := hashKey(p, x)
			if !tt.wantSet {
				if setCookie != "" {
					t.Errorf("Set-Cookie = %q, want none for a client that has the cookie", setCookie)
				}
				if want := balancer.HashKey(tt.wantKeyOf); key != want {
					t.Errorf("key = %d, want HashKey(%q) = %d", key, tt.wantKeyOf, want)
				}
				return
			}
			c, err := http.ParseSetCookie(setCookie)
			if err != nil {
				t.Fatalf("Set-Cookie %q does not parse: %v", setCookie, err)
			}
			if c.Name != tt.wantName || c.Path != tt.wantPath || c.Domain != tt.wantDomain || c.MaxAge != tt.wantMaxAge ||
				c.Secure != tt.wantSecure || c.SameSite != tt.wantSame || !c.HttpOnly {
				t.Errorf("Set-Cookie %q = {name %s path %s domain %s max-age %d secure %v samesite %v httponly %v}, "+
					"want {name %s path %s domain %s max-age %d secure %v samesite %v httponly true}", setCookie,
					c.Name, c.Path, c.Domain, c.MaxAge, c.Secure, c.SameSite, c.HttpOnly,
					tt.wantName, tt.wantPath, tt.wantDomain, tt.wantMaxAge, tt.wantSecure, tt.wantSame)
			}
			if c.Value == "" {
				t.Errorf("Set-Cookie %q has an empty value", setCookie)
			}
			token, tag, _ := strings.Cut(c.Value, "|")
			if want := balancer.HashKey(token); key != want {
				t.Errorf("key = %d, want HashKey of the cookie's token %q = %d, so the next request goes to the same member", key, token, want)
			}
			if tag != p.AffinityTag || tag == "" {
				t.Errorf("cookie %q names the pool %q, want %q", c.Value, tag, p.AffinityTag)
			}
			if tt.wantMaxAge > 0 {
				if d := time.Until(c.Expires); d < time.Duration(tt.wantMaxAge-60)*time.Second || d > time.Duration(tt.wantMaxAge+60)*time.Second {
					t.Errorf("Expires = %v (in %v), want about %ds from now", c.Expires, d, tt.wantMaxAge)
				}
			} else if !c.Expires.IsZero() {
				t.Errorf("Expires = %v on a session cookie, want none", c.Expires)
			}

			// The client that sends it back gets the same key, and no new cookie.
			r2 := httptest.NewRequest("GET", "/", nil)
			r2.Header.Set("Cookie", c.Name+"="+c.Value)
			key2, set2 := hashKey(p, exchangeFor(r2))
			if key2 != key || set2 != "" {
				t.Errorf("with the cookie set: hashKey = (%d, %q), want (%d, \"\")", key2, set2, key)
			}
		})
	}
}

func TestHashKeyCookieValuesDiffer(t *testing.T) {
	p := hashPool(t, config.Hash{By: config.HashByCookie})
	seen := map[string]bool{}
	for range 50 {
		_, sc := hashKey(p, exchangeFor(httptest.NewRequest("GET", "/", nil)))
		c, err := http.ParseSetCookie(sc)
		if err != nil {
			t.Fatal(err)
		}
		token, _, _ := strings.Cut(c.Value, "|")
		if _, err := strconv.ParseUint(token, 36, 64); err != nil {
			t.Errorf("cookie value %q is not a base-36 number and the pool's tag", c.Value)
		}
		seen[c.Value] = true
	}
	if len(seen) < 50 {
		t.Errorf("%d different values in 50 new cookies, want 50", len(seen))
	}
}

// keysOf calls hashKey five times on requests made by newRequest and
// returns the distinct keys, failing the test when one sets a cookie.
func keysOf(t *testing.T, p *upstream.Pool, newRequest func() *exchange.Request) map[uint64]bool {
	t.Helper()
	keys := map[uint64]bool{}
	for range 5 {
		key, setCookie := hashKey(p, newRequest())
		if setCookie != "" {
			t.Fatalf("Set-Cookie = %q, want none", setCookie)
		}
		keys[key] = true
	}
	return keys
}

// checkKeys checks that keys is the one key HashKey(want), or with want ""
// that they are random points (at least two different ones in five).
func checkKeys(t *testing.T, keys map[uint64]bool, want string) {
	t.Helper()
	if want == "" {
		if len(keys) < 2 {
			t.Errorf("the same key for every request without a key, want a random point each time")
		}
		return
	}
	if wantKey := balancer.HashKey(want); len(keys) != 1 || !keys[wantKey] {
		t.Errorf("keys %v, want only HashKey(%q) = %d", keys, want, wantKey)
	}
}

func TestHashKeyCookieValue(t *testing.T) {
	p := hashPool(t, config.Hash{By: config.HashByCookieValue, CookieName: "sid"})
	tests := []struct {
		name      string
		sent      []string // Cookie header lines
		wantKeyOf string   // "" for a random point
	}{
		{name: "present", sent: []string{"sid=abc"}, wantKeyOf: "abc"},
		{name: "among others", sent: []string{"a=1; sid=abc; b=2"}, wantKeyOf: "abc"},
		{name: "quoted", sent: []string{`sid="abc"`}, wantKeyOf: "abc"},
		{name: "the first of two", sent: []string{"sid=abc; sid=def"}, wantKeyOf: "abc"},
		{name: "in a second Cookie line", sent: []string{"a=1", "sid=abc"}, wantKeyOf: "abc"},
		{name: "absent", sent: nil},
		{name: "other cookies only", sent: []string{"a=1; sidx=abc"}},
		{name: "name differs in case", sent: []string{"SID=abc"}},
		{name: "empty value", sent: []string{"sid="}},
		{name: "the affinity cookie does not count", sent: []string{"INGRESSCOOKIE=abc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys := keysOf(t, p, func() *exchange.Request {
				r := httptest.NewRequest("GET", "/", nil)
				r.Header["Cookie"] = tt.sent
				return exchangeFor(r)
			})
			checkKeys(t, keys, tt.wantKeyOf)
		})
	}
}

func TestHashKeyRequestURI(t *testing.T) {
	p := hashPool(t, config.Hash{By: config.HashByRequestURI})
	tests := []struct {
		name      string
		method    string
		target    string // "" for a request made by a client (no RequestURI)
		rewrite   string // ForwardPath set by a rewrite
		wantKeyOf string // "" for a random point
	}{
		{name: "path and query", target: "/a/b?x=1&y=2", wantKeyOf: "/a/b?x=1&y=2"},
		{name: "as sent, not normalised", target: "/a//b/./c/%2E%2E/d%2Fe?x", wantKeyOf: "/a//b/./c/%2E%2E/d%2Fe?x"},
		{name: "before a rewrite", target: "/api/v1/users?page=2", rewrite: "/users", wantKeyOf: "/api/v1/users?page=2"},
		{name: "empty query kept", target: "/a?", wantKeyOf: "/a?"},
		{name: "absolute form", target: "http://app.test/a?x=1", wantKeyOf: "/a?x=1"},
		{name: "absolute form with user and port", target: "http://u@app.test:8080/a", wantKeyOf: "/a"},
		{name: "absolute form without a path", target: "http://app.test", wantKeyOf: "/"},
		{name: "asterisk form", method: "OPTIONS", target: "*", wantKeyOf: "*"},
		{name: "no request target", target: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys := keysOf(t, p, func() *exchange.Request {
				method := cmp.Or(tt.method, "GET")
				var r *http.Request
				if tt.target == "" {
					r, _ = http.NewRequest(method, "http://app.test/client", nil)
				} else {
					r = httptest.NewRequest(method, tt.target, nil)
				}
				x := exchangeFor(r)
				x.ForwardPath = tt.rewrite
				return x
			})
			checkKeys(t, keys, tt.wantKeyOf)
		})
	}
}

// TestHashKeyAllocations checks that finding the key of a request, present
// or not, allocates nothing; only a new affinity cookie does.
func TestHashKeyAllocations(t *testing.T) {
	tests := []struct {
		name   string
		hash   config.Hash
		cookie string
	}{
		{name: "client_ip", hash: config.Hash{By: config.HashByClientIP}},
		{name: "header", hash: config.Hash{By: config.HashByHeader, Header: "X-User"}},
		{name: "header absent", hash: config.Hash{By: config.HashByHeader, Header: "X-Other"}},
		{name: "cookie", hash: config.Hash{By: config.HashByCookie, Cookie: &config.AffinityCookie{Name: "sid"}}, cookie: "a=1; sid=abc"},
		{name: "cookie_value", hash: config.Hash{By: config.HashByCookieValue, CookieName: "sid"}, cookie: "a=1; sid=abc"},
		{name: "cookie_value absent", hash: config.Hash{By: config.HashByCookieValue, CookieName: "sid"}, cookie: "a=1"},
		{name: "request_uri", hash: config.Hash{By: config.HashByRequestURI}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := hashPool(t, tt.hash)
			r := httptest.NewRequest("GET", "http://app.test/a/b?c=d", nil)
			r.Header.Set("X-User", "alice")
			if tt.cookie != "" {
				r.Header.Set("Cookie", tt.cookie)
			}
			x := exchangeFor(r)
			if n := testing.AllocsPerRun(1000, func() { hashKey(p, x) }); n != 0 {
				t.Errorf("hashKey allocates %v times per request, want 0", n)
			}
		})
	}
}

// affinityRequest is a request whose affinity cookie holds value.
func affinityRequest(value string) *exchange.Request {
	r := httptest.NewRequest("GET", "/", nil)
	if value != "" {
		r.Header.Set("Cookie", "a=1; INGRESSCOOKIE="+value)
	}
	return exchangeFor(r)
}

func TestPersistentCookie(t *testing.T) {
	p := buildPool(t, config.Pool{Balance: config.BalanceHash, Hash: &config.Hash{By: config.HashByCookie,
		Cookie: &config.AffinityCookie{Mode: config.AffinityPersistent}}}, "127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3")
	// A new client gets the cookie of the member that serves it.
	f := &forwarding{pool: p, set: p.Members(), x: affinityRequest("")}
	f.key, f.setCookie = hashKey(p, f.x)
	if f.setCookie != "" {
		t.Fatalf("persistent: a cookie %q before the member is known", f.setCookie)
	}
	i := f.pickMember(nil)
	c, err := http.ParseSetCookie(f.setCookie)
	if err != nil {
		t.Fatalf("Set-Cookie %q: %v", f.setCookie, err)
	}
	want := string(balancer.AppendMemberKey(nil, balancer.MemberKey(f.set.Member(i).Address))) + "|" + p.AffinityTag
	if c.Value != want {
		t.Fatalf("cookie %q, want %q (the member's key and the pool's tag)", c.Value, want)
	}
	// The client that sends it back goes to that member, without a new
	// cookie; a retry keeps the cookie.
	g := &forwarding{pool: p, set: p.Members(), x: affinityRequest(c.Value)}
	g.key, g.setCookie = hashKey(p, g.x)
	if j := g.pickMember(nil); j != i || g.setCookie != "" {
		t.Fatalf("with its cookie: member %d, cookie %q; want %d and none", j, g.setCookie, i)
	}
	if j := g.pickMember([]int{i}); j == i || j < 0 || g.setCookie != "" {
		t.Fatalf("retry: member %d, cookie %q; want another member and no cookie", j, g.setCookie)
	}
}

func TestStickyTarget(t *testing.T) {
	state := upstream.NewState()
	build := func(name string, h *config.Hash) *upstream.Pool {
		p, err := state.Build(name, &config.Pool{Balance: config.BalanceHash, Hash: h, Members: []config.Member{{Address: "127.0.0.1:1"}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Transport.Close)
		return p
	}
	main, canary := build("main", &config.Hash{By: config.HashByCookie}), build("canary", &config.Hash{By: config.HashByCookie})
	other := build("other", &config.Hash{By: config.HashByClientIP})
	if main.AffinityTag == canary.AffinityTag || other.AffinityTag != "" {
		t.Fatalf("tags %q %q %q: want two different ones and none for client_ip", main.AffinityTag, canary.AffinityTag, other.AffinityTag)
	}
	targets := []Target{{Pool: main, Weight: 1}, {Pool: canary}, {Pool: other}}
	h := New(targets, Route{Sticky: true}, Options{})
	for _, tc := range []struct{ name, cookie, want string }{
		{"main's cookie", "abc|" + main.AffinityTag, "main"},
		{"canary's cookie", "abc|" + canary.AffinityTag, "canary"},
		{"an older cookie", "abc", ""},
		{"another pool's tag", "abc|zzz", ""},
		{"no cookie", "", ""},
	} {
		got := ""
		if t := h.stickyTarget(affinityRequest(tc.cookie)); t != nil {
			got = t.Pool.Name
		}
		if got != tc.want {
			t.Errorf("%s: target %q, want %q", tc.name, got, tc.want)
		}
	}
	if New(targets, Route{}, Options{}).stickyTarget(affinityRequest("abc|"+canary.AffinityTag)) != nil {
		t.Error("without sticky a cookie chose the target")
	}
}

// BenchmarkAffinity measures what cookie affinity adds to a request: the
// key from the cookie, the pick, and the sticky check of a canary split.
func BenchmarkAffinity(b *testing.B) {
	var addrs []string
	for i := range 100 {
		addrs = append(addrs, fmt.Sprintf("10.0.%d.%d:8080", i/250, i%250+1))
	}
	state := upstream.NewState()
	for _, mode := range []config.AffinityMode{config.AffinityBalanced, config.AffinityPersistent} {
		cfg := config.Pool{Balance: config.BalanceHash, Hash: &config.Hash{By: config.HashByCookie, Cookie: &config.AffinityCookie{Mode: mode}}}
		for _, a := range addrs {
			cfg.Members = append(cfg.Members, config.Member{Address: a})
		}
		p, err := state.Build("pool-"+string(mode), &cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer p.Transport.Close()
		token := "3nmk1fxvwgps5"
		if mode == config.AffinityPersistent {
			token = string(balancer.AppendMemberKey(nil, balancer.MemberKey(addrs[42])))
		}
		x := affinityRequest(token + "|" + p.AffinityTag)
		b.Run(string(mode)+"/cookie", func(b *testing.B) {
			b.ReportAllocs()
			f := &forwarding{pool: p, set: p.Members(), x: x}
			for b.Loop() {
				f.key, f.setCookie = hashKey(p, x)
				f.pickMember(nil)
			}
		})
		other := build100(b, state, mode)
		h := New([]Target{{Pool: other, Weight: 99}, {Pool: p, Weight: 1}}, Route{Sticky: true}, Options{})
		b.Run(string(mode)+"/sticky", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if h.stickyTarget(x) == nil {
					b.Fatal("no sticky target")
				}
			}
		})
	}
}

func build100(b *testing.B, state *upstream.State, mode config.AffinityMode) *upstream.Pool {
	p, err := state.Build("main-"+string(mode), &config.Pool{Balance: config.BalanceHash,
		Hash: &config.Hash{By: config.HashByCookie, Cookie: &config.AffinityCookie{Mode: mode}}, Members: []config.Member{{Address: "10.1.0.1:80"}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.Transport.Close)
	return p
}
