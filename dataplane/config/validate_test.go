package config_test

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// base returns a small valid configuration that the cases of
// TestValidateRules break one rule at a time: listener http, tenant t with
// application app (domain example.com, one route prefix / to pool p) and
// pool p (one member).
func base() *config.Config {
	return &config.Config{
		Server: config.Server{
			Listeners: map[string]*config.Listener{"http": {Address: ":80"}},
		},
		Tenants: map[string]*config.Tenant{
			"t": {
				Applications: map[string]*config.Application{
					"app": {
						Domains: []string{"example.com"},
						Routes: []*config.Route{{
							Match:  config.Match{Path: config.PathMatch{Prefix: "/"}},
							Action: config.Action{Pool: "p"},
						}},
					},
				},
				Pools: map[string]*config.Pool{
					"p": {Members: []config.Member{{Address: "10.0.0.1:80"}}},
				},
			},
		},
	}
}

func tenant(c *config.Config) *config.Tenant   { return c.Tenants["t"] }
func app(c *config.Config) *config.Application { return tenant(c).Applications["app"] }
func pool(c *config.Config) *config.Pool       { return tenant(c).Pools["p"] }
func route(c *config.Config) *config.Route     { return app(c).Routes[0] }
func match(c *config.Config) *config.Match     { return &route(c).Match }
func action(c *config.Config) *config.Action   { return &route(c).Action }

// addRoute appends a route with the given match to pool p.
func addRoute(c *config.Config, m config.Match) {
	app(c).Routes = append(app(c).Routes, &config.Route{Match: m, Action: config.Action{Pool: "p"}})
}

// hashByCookie sets pool p to cookie hashing with the given cookie.
func hashByCookie(c *config.Config, ck config.AffinityCookie) {
	hashBy(c, config.Hash{By: config.HashByCookie, Cookie: &ck})
}

// hashBy sets pool p to hash balancing with h.
func hashBy(c *config.Config, h config.Hash) {
	pool(c).Balance = config.BalanceHash
	pool(c).Hash = &h
}

func intp(n int) *int { return &n }

func prefix(p string) config.Match { return config.Match{Path: config.PathMatch{Prefix: p}} }

const (
	A  = "tenants.t.applications.app"
	R0 = A + ".routes[0]"
	P  = "tenants.t.pools.p"
)

var (
	long64   = strings.Repeat("n", 64)
	long63   = strings.Repeat("n", 63)
	label64  = strings.Repeat("a", 64) + ".example.com"
	domain25 = strings.Repeat("abcdefghi.", 25) + "com" // 253 bytes
	domain26 = "a" + domain25                           // 254 bytes
)

// TestValidateRules breaks each rule of validate.go once and checks that
// Validate reports exactly that problem, at its path.
func TestValidateRules(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(c *config.Config)
		want   []wantErr
	}{
		{"base is valid", func(c *config.Config) {}, nil},
		{"https_redirect_target port", func(c *config.Config) {
			app(c).HTTPSRedirectTarget = &config.HTTPSRedirectTarget{TrimTrailingSlash: true, Port: 443}
		}, nil},
		{"https_redirect_target port too large", func(c *config.Config) {
			app(c).HTTPSRedirectTarget = &config.HTTPSRedirectTarget{Port: 65536}
		}, []wantErr{{A + ".https_redirect_target.port", "must be 1..65535, or 0 for no port"}}},
		{"route https_redirect_target port negative", func(c *config.Config) {
			app(c).Routes[0].HTTPSRedirectTarget = &config.HTTPSRedirectTarget{Port: -1}
		}, []wantErr{{R0 + ".https_redirect_target.port", "must be 1..65535"}}},

		// server.listeners
		{"no listeners", func(c *config.Config) { c.Server.Listeners = nil },
			[]wantErr{{"server.listeners", "at least one listener is required"}}},
		{"listener name invalid", func(c *config.Config) {
			c.Server.Listeners = map[string]*config.Listener{"bad name": {Address: ":80"}}
		}, []wantErr{{"server.listeners.bad name", `name "bad name" must be 1..63 letters, digits`}}},
		{"listener name too long", func(c *config.Config) {
			c.Server.Listeners = map[string]*config.Listener{long64: {Address: ":80"}}
		}, []wantErr{{"server.listeners." + long64, "must be 1..63"}}},
		{"listener name of 63 characters", func(c *config.Config) {
			c.Server.Listeners = map[string]*config.Listener{long63: {Address: ":80"}}
		}, nil},
		{"listener nil", func(c *config.Config) { c.Server.Listeners["http"] = nil },
			[]wantErr{{"server.listeners.http.address", "is required"}}},
		{"listener address empty", func(c *config.Config) { c.Server.Listeners["http"].Address = "" },
			[]wantErr{{"server.listeners.http.address", "is required"}}},
		{"listener address without port", func(c *config.Config) { c.Server.Listeners["http"].Address = "localhost" },
			[]wantErr{{"server.listeners.http.address", `"localhost" is not host:port`}}},
		{"listener port out of range", func(c *config.Config) { c.Server.Listeners["http"].Address = ":65536" },
			[]wantErr{{"server.listeners.http.address", `port "65536" must be a number 0..65535`}}},
		{"listener port not a number", func(c *config.Config) { c.Server.Listeners["http"].Address = ":http" },
			[]wantErr{{"server.listeners.http.address", `port "http" must be a number 0..65535`}}},
		{"listener host invalid", func(c *config.Config) { c.Server.Listeners["http"].Address = "bad_host:80" },
			[]wantErr{{"server.listeners.http.address", `host "bad_host" is neither an IP address nor a host name`}}},
		{"listener host wildcard", func(c *config.Config) { c.Server.Listeners["http"].Address = "*.example.com:80" },
			[]wantErr{{"server.listeners.http.address", `host "*.example.com" is neither an IP address nor a host name`}}},
		{"listener host deep wildcard", func(c *config.Config) { c.Server.Listeners["http"].Address = "**.example.com:80" },
			[]wantErr{{"server.listeners.http.address", `host "**.example.com" is neither an IP address nor a host name`}}},
		{"listener IPv6 and host name", func(c *config.Config) {
			c.Server.Listeners["v6"] = &config.Listener{Address: "[::1]:80"}
			c.Server.Listeners["named"] = &config.Listener{Address: "localhost:81"}
		}, nil},
		{"duplicate listener address", func(c *config.Config) {
			c.Server.Listeners["https"] = &config.Listener{Address: ":80"}
		}, []wantErr{{"server.listeners.https.address", ":80 is already used by server.listeners.http.address"}}},
		{"port 0 may repeat", func(c *config.Config) {
			c.Server.Listeners["a"] = &config.Listener{Address: "127.0.0.1:0"}
			c.Server.Listeners["b"] = &config.Listener{Address: "127.0.0.1:0"}
		}, nil},
		{"listener tls cert without key", func(c *config.Config) {
			c.Server.Listeners["http"].TLS = &config.ListenerTLS{CertFile: "tls.crt"}
		}, []wantErr{{"server.listeners.http.tls", "cert_file and key_file go together"}}},
		{"listener tls key without cert", func(c *config.Config) {
			c.Server.Listeners["http"].TLS = &config.ListenerTLS{KeyFile: "tls.key"}
		}, []wantErr{{"server.listeners.http.tls", "cert_file and key_file go together"}}},
		{"listener tls generated", func(c *config.Config) { c.Server.Listeners["http"].TLS = &config.ListenerTLS{} }, nil},
		{"listener h2c without tls", func(c *config.Config) { c.Server.Listeners["http"].H2C = true }, nil},
		{"listener h2c with tls", func(c *config.Config) {
			c.Server.Listeners["http"].TLS = &config.ListenerTLS{}
			c.Server.Listeners["http"].H2C = true
		}, []wantErr{{"server.listeners.http.h2c", "only for a listener without tls"}}},

		// server.health, server.admin
		{"health address invalid", func(c *config.Config) { c.Server.Health.Address = "9090" },
			[]wantErr{{"server.health.address", `"9090" is not host:port`}}},
		{"health address used by a listener", func(c *config.Config) { c.Server.Health.Address = ":80" },
			[]wantErr{{"server.health.address", ":80 is already used by server.listeners.http.address"}}},
		{"health address", func(c *config.Config) { c.Server.Health.Address = "127.0.0.1:9090" }, nil},
		{"admin socket with NUL", func(c *config.Config) { c.Server.Admin.Socket = "/run/a\x00b" },
			[]wantErr{{"server.admin.socket", "must not contain NUL"}}},

		// server.limits
		{"max_header_bytes below 1KiB", func(c *config.Config) { c.Server.Limits.MaxHeaderBytes = 1<<10 - 1 },
			[]wantErr{{"server.limits.max_header_bytes", "must be 1KiB..1MiB"}}},
		{"max_header_bytes above 1MiB", func(c *config.Config) { c.Server.Limits.MaxHeaderBytes = 1<<20 + 1 },
			[]wantErr{{"server.limits.max_header_bytes", "must be 1KiB..1MiB"}}},
		{"max_header_bytes bounds", func(c *config.Config) { c.Server.Limits.MaxHeaderBytes = 1 << 10 }, nil},
		{"max_header_bytes upper bound", func(c *config.Config) { c.Server.Limits.MaxHeaderBytes = 1 << 20 }, nil},
		{"read_header_timeout above 5m", func(c *config.Config) {
			c.Server.Limits.ReadHeaderTimeout = config.Duration(5*time.Minute + time.Second)
		}, []wantErr{{"server.limits.read_header_timeout", "must be at most 5m"}}},
		{"read_header_timeout 5m", func(c *config.Config) { c.Server.Limits.ReadHeaderTimeout = config.Duration(5 * time.Minute) }, nil},
		{"idle_timeout above 1h", func(c *config.Config) { c.Server.Limits.IdleTimeout = config.Duration(time.Hour + time.Second) },
			[]wantErr{{"server.limits.idle_timeout", "must be at most 1h"}}},
		{"idle_timeout 1h", func(c *config.Config) { c.Server.Limits.IdleTimeout = config.Duration(time.Hour) }, nil},
		{"send_timeout above 1h", func(c *config.Config) { c.Server.Limits.SendTimeout = config.Duration(time.Hour + time.Second) },
			[]wantErr{{"server.limits.send_timeout", "must be at most 1h"}}},
		{"lingering_time above 5m", func(c *config.Config) { c.Server.Limits.LingeringTime = config.Duration(5*time.Minute + time.Second) },
			[]wantErr{{"server.limits.lingering_time", "must be at most 5m"}}},
		{"lingering_timeout above the default lingering_time", func(c *config.Config) { c.Server.Limits.LingeringTimeout = config.Duration(31 * time.Second) },
			[]wantErr{{"server.limits.lingering_timeout", "must be at most lingering_time (30s)"}}},
		{"lingering_timeout above lingering_time", func(c *config.Config) {
			c.Server.Limits.LingeringTime = config.Duration(2 * time.Second)
			c.Server.Limits.LingeringTimeout = config.Duration(3 * time.Second)
		}, []wantErr{{"server.limits.lingering_timeout", "must be at most lingering_time (2s)"}}},
		{"lingering bounds within limits", func(c *config.Config) {
			c.Server.Limits.LingeringTime = config.Duration(time.Minute)
			c.Server.Limits.LingeringTimeout = config.Duration(10 * time.Second)
			c.Server.Limits.SendTimeout = config.Duration(time.Hour)
		}, nil},
		{"max_regex_input_bytes below 1KiB", func(c *config.Config) { c.Server.Limits.MaxRegexInputBytes = 1<<10 - 1 },
			[]wantErr{{"server.limits.max_regex_input_bytes", "must be 1KiB..1MiB"}}},
		{"max_regex_input_bytes above 1MiB", func(c *config.Config) { c.Server.Limits.MaxRegexInputBytes = 1<<20 + 1 },
			[]wantErr{{"server.limits.max_regex_input_bytes", "must be 1KiB..1MiB"}}},
		{"max_regex_input_bytes bounds", func(c *config.Config) { c.Server.Limits.MaxRegexInputBytes = 1 << 10 }, nil},
		{"max_regex_input_bytes upper bound", func(c *config.Config) { c.Server.Limits.MaxRegexInputBytes = 1 << 20 }, nil},
		{"http2_max_concurrent_streams above 10000", func(c *config.Config) { c.Server.Limits.HTTP2MaxConcurrentStreams = 10001 },
			[]wantErr{{"server.limits.http2_max_concurrent_streams", "must be 1..10000"}}},
		{"http2_max_concurrent_streams 10000", func(c *config.Config) { c.Server.Limits.HTTP2MaxConcurrentStreams = 10000 }, nil},

		// server.trusted_proxies
		{"trusted_proxies bad CIDR and bad address", func(c *config.Config) {
			c.Server.TrustedProxies = []string{"10.0.0.0/8", "10.0.0.0/33", "proxy.local", "::1"}
		}, []wantErr{
			{"server.trusted_proxies[1]", `"10.0.0.0/33" is not a CIDR`},
			{"server.trusted_proxies[2]", `"proxy.local" is neither an address nor a CIDR`},
		}},

		// names, empty entries, pools shared by tenants
		{"tenant name invalid", func(c *config.Config) {
			c.Tenants["bad/tenant"] = c.Tenants["t"]
			delete(c.Tenants, "t")
		}, []wantErr{{"tenants.bad/tenant", `name "bad/tenant" must be 1..63`}}},
		{"tenant name too long", func(c *config.Config) {
			c.Tenants[long64] = c.Tenants["t"]
			delete(c.Tenants, "t")
		}, []wantErr{{"tenants." + long64, "must be 1..63"}}},
		{"tenant empty", func(c *config.Config) { c.Tenants["u"] = nil },
			[]wantErr{{"tenants.u", "is empty"}}},
		{"pool name invalid", func(c *config.Config) {
			tenant(c).Pools["_p"] = &config.Pool{Members: []config.Member{{Address: "10.0.0.2:80"}}}
		}, []wantErr{{"tenants.t.pools._p", `name "_p" must be 1..63`}}},
		{"pool empty", func(c *config.Config) { tenant(c).Pools["q"] = nil },
			[]wantErr{{"tenants.t.pools.q", "is empty"}}},
		{"application name invalid", func(c *config.Config) {
			tenant(c).Applications["-b"] = &config.Application{Domains: []string{"b.example.com"}}
		}, []wantErr{{"tenants.t.applications.-b", `name "-b" must be 1..63`}}},
		{"application empty", func(c *config.Config) { tenant(c).Applications["b"] = nil },
			[]wantErr{{"tenants.t.applications.b", "is empty"}}},
		{"pool name used by two tenants", func(c *config.Config) {
			c.Tenants["u"] = &config.Tenant{Pools: map[string]*config.Pool{"p": {}}}
		}, []wantErr{{"tenants.u.pools.p", "pool name already used by tenant t"}}},

		// domains
		{"no domains", func(c *config.Config) { app(c).Domains = nil },
			[]wantErr{{A + ".domains", "at least one domain is required"}}},
		{"domain upper case", func(c *config.Config) { app(c).Domains = []string{"Example.com"} },
			[]wantErr{{A + ".domains[0]", `"Example.com" is not a domain name: must be lower case`}}},
		{"domain with port", func(c *config.Config) { app(c).Domains = []string{"example.com:8080"} },
			[]wantErr{{A + ".domains[0]", "must not hold a port"}}},
		{"domain with * inside", func(c *config.Config) { app(c).Domains = []string{"www.*.example.com"} },
			[]wantErr{{A + ".domains[0]", "'*' may only be the whole left-most label"}}},
		{"domain with * in a label", func(c *config.Config) { app(c).Domains = []string{"*www.example.com"} },
			[]wantErr{{A + ".domains[0]", "'*' may only be the whole left-most label"}}},
		{"domain with empty label", func(c *config.Config) { app(c).Domains = []string{"www..example.com"} },
			[]wantErr{{A + ".domains[0]", "labels are 1..63 characters"}}},
		{"domain with trailing dot", func(c *config.Config) { app(c).Domains = []string{"example.com."} },
			[]wantErr{{A + ".domains[0]", "labels are 1..63 characters"}}},
		{"domain label too long", func(c *config.Config) { app(c).Domains = []string{label64} },
			[]wantErr{{A + ".domains[0]", "labels are 1..63 characters"}}},
		{"domain too long", func(c *config.Config) { app(c).Domains = []string{domain26} },
			[]wantErr{{A + ".domains[0]", "is not a domain name"}}},
		{"domain of 253 bytes", func(c *config.Config) { app(c).Domains = []string{domain25} }, nil},
		{"domain listed twice", func(c *config.Config) { app(c).Domains = []string{"example.com", "example.com"} },
			[]wantErr{{A + ".domains[1]", "example.com is listed twice"}}},
		{"domain in two applications", func(c *config.Config) {
			tenant(c).Applications["b"] = &config.Application{Domains: []string{"www.example.com", "example.com"}}
		}, []wantErr{{"tenants.t.applications.b.domains[1]", "domain example.com is already served by t/app"}}},
		{"domain in two tenants", func(c *config.Config) {
			c.Tenants["u"] = &config.Tenant{Applications: map[string]*config.Application{"web": {Domains: []string{"example.com"}}}}
		}, []wantErr{{"tenants.u.applications.web.domains[0]", "domain example.com is already served by t/app"}}},
		{"deep wildcard domain", func(c *config.Config) { app(c).Domains = []string{"**.example.com"} }, nil},
		{"deep wildcard with * inside", func(c *config.Config) { app(c).Domains = []string{"**.*.example.com"} },
			[]wantErr{{A + ".domains[0]", "'*' may only be the whole left-most label"}}},
		{"three stars", func(c *config.Config) { app(c).Domains = []string{"***.example.com"} },
			[]wantErr{{A + ".domains[0]", "'*' may only be the whole left-most label"}}},
		{"deep wildcard listed twice", func(c *config.Config) { app(c).Domains = []string{"**.example.com", "**.example.com"} },
			[]wantErr{{A + ".domains[1]", "**.example.com is listed twice"}}},
		{"both wildcards in one application", func(c *config.Config) {
			app(c).Domains = []string{"*.example.com", "**.example.com", "example.com"}
		}, nil},
		// "*.example.com" and "**.example.com" are distinct domains: the
		// one-label wildcard takes a.example.com, the other a.b.example.com.
		{"both wildcards in two applications", func(c *config.Config) {
			app(c).Domains = []string{"*.example.com"}
			tenant(c).Applications["b"] = &config.Application{Domains: []string{"**.example.com"}}
		}, nil},
		{"deep wildcard domain in two tenants", func(c *config.Config) {
			app(c).Domains = []string{"**.example.com"}
			c.Tenants["u"] = &config.Tenant{Applications: map[string]*config.Application{"web": {Domains: []string{"**.example.com"}}}}
		}, []wantErr{{"tenants.u.applications.web.domains[0]", "domain **.example.com is already served by t/app"}}},
		{"deep wildcard domain on two listeners", func(c *config.Config) {
			c.Server.Listeners["other"] = &config.Listener{Address: ":81"}
			app(c).Domains, app(c).Listeners = []string{"**.example.com"}, []string{"http"}
			tenant(c).Applications["b"] = &config.Application{Domains: []string{"**.example.com"}, Listeners: []string{"other"}}
		}, nil},
		{"wildcard domain in two tenants", func(c *config.Config) {
			app(c).Domains = []string{"*.example.com"}
			c.Tenants["u"] = &config.Tenant{Applications: map[string]*config.Application{"web": {Domains: []string{"*.example.com"}}}}
		}, []wantErr{{"tenants.u.applications.web.domains[0]", "domain *.example.com is already served by t/app"}}},
		{"two catch-alls", func(c *config.Config) {
			app(c).Domains = []string{"*"}
			c.Tenants["u"] = &config.Tenant{Applications: map[string]*config.Application{"web": {Domains: []string{"*"}}}}
		}, []wantErr{{"tenants.u.applications.web.domains[0]", `the catch-all domain "*" is already held by t/app`}}},
		{"catch-all listed twice in one application", func(c *config.Config) { app(c).Domains = []string{"*", "*"} },
			[]wantErr{{A + ".domains[1]", "* is listed twice"}}},

		// application tls
		{"application tls cert without key", func(c *config.Config) {
			app(c).TLS = &config.CertificateFiles{CertFile: "tls.crt"}
		}, []wantErr{{A + ".tls", "cert_file and key_file are required"}}},
		{"application tls on catch-all only", func(c *config.Config) {
			app(c).Domains = []string{"*"}
			app(c).TLS = &config.CertificateFiles{CertFile: "tls.crt", KeyFile: "tls.key"}
		}, []wantErr{{A + ".tls", "the catch-all application has no name to match a certificate to"}}},
		{"application tls on catch-all and a name", func(c *config.Config) {
			app(c).Domains = []string{"*", "example.com"}
			app(c).TLS = &config.CertificateFiles{CertFile: "tls.crt", KeyFile: "tls.key"}
		}, nil},

		// application sni_group
		{"sni_group", func(c *config.Config) { app(c).SNIGroup = "gw-1" }, nil},
		{"sni_group not a name", func(c *config.Config) { app(c).SNIGroup = "a b" }, []wantErr{{A + ".sni_group", ""}}},

		// application client_auth
		{"client_auth without tls", func(c *config.Config) {
			app(c).ClientAuth = &config.ClientAuth{CAFile: "ca.crt"}
		}, []wantErr{{A + ".client_auth", "requires the application's tls"}}},
		{"client_auth complete", func(c *config.Config) {
			app(c).TLS = &config.CertificateFiles{CertFile: "tls.crt", KeyFile: "tls.key"}
			app(c).ClientAuth = &config.ClientAuth{CAFile: "ca.crt", CRLFile: "ca.crl", Verify: config.VerifyOptionalNoCA, VerifyDepth: 10,
				PassCertificate: true, ErrorPage: "https://login.example.com/", SubjectRegex: "CN=(alice|bob)"}
		}, nil},
		{"client_auth wrong values", func(c *config.Config) {
			app(c).TLS = &config.CertificateFiles{CertFile: "tls.crt", KeyFile: "tls.key"}
			app(c).ClientAuth = &config.ClientAuth{Verify: "off", VerifyDepth: 11, ErrorPage: "https://a\nb", SubjectRegex: "CN=(alice"}
		}, []wantErr{
			{A + ".client_auth.ca_file", "is required"},
			{A + ".client_auth.verify", "must be on, optional or optional_no_ca"},
			{A + ".client_auth.verify_depth", "must be 0..10"},
			{A + ".client_auth.error_page", "control characters"},
			{A + ".client_auth.subject_regex", "invalid regular expression"},
		}},

		// routes
		{"route nil", func(c *config.Config) { app(c).Routes = append(app(c).Routes, nil) },
			[]wantErr{{A + ".routes[1]", "is empty"}}},
		{"route name with newline", func(c *config.Config) { route(c).Name = "a\nb" },
			[]wantErr{{R0 + ".name", "must be at most 4096 bytes without control characters"}}},
		{"route name too long", func(c *config.Config) { route(c).Name = strings.Repeat("r", 4097) },
			[]wantErr{{R0 + ".name", "must be at most 4096 bytes"}}},
		{"same match twice", func(c *config.Config) { addRoute(c, prefix("/")) },
			[]wantErr{{A + ".routes[1].match", "the same match as routes[0]; this route would never be used"}}},
		{"prefix with and without trailing slash", func(c *config.Config) {
			addRoute(c, prefix("/x"))
			addRoute(c, prefix("/x/"))
		}, []wantErr{{A + ".routes[2].match", "the same match as routes[1]"}}},
		{"header matchers in another order", func(c *config.Config) {
			addRoute(c, config.Match{Path: config.PathMatch{Exact: "/x"}, Headers: []config.HeaderMatch{{Name: "A", Exact: "1"}, {Name: "B"}}})
			addRoute(c, config.Match{Path: config.PathMatch{Exact: "/x"}, Headers: []config.HeaderMatch{{Name: "B"}, {Name: "A", Exact: "1"}}})
		}, []wantErr{{A + ".routes[2].match", "the same match as routes[1]"}}},
		{"header names differing in case", func(c *config.Config) {
			addRoute(c, config.Match{Path: config.PathMatch{Regex: "/x"}, Headers: []config.HeaderMatch{{Name: "X-Env", Regex: "prod"}}})
			addRoute(c, config.Match{Path: config.PathMatch{Regex: "/x"}, Headers: []config.HeaderMatch{{Name: "x-env", Regex: "prod"}}})
		}, []wantErr{{A + ".routes[2].match", "the same match as routes[1]"}}},
		{"cookie matchers in another order", func(c *config.Config) {
			addRoute(c, config.Match{Path: config.PathMatch{Prefix: "/y"}, Cookies: []config.CookieMatch{{Name: "a"}, {Name: "b", Exact: "1"}}})
			addRoute(c, config.Match{Path: config.PathMatch{Prefix: "/y/"}, Cookies: []config.CookieMatch{{Name: "b", Exact: "1"}, {Name: "a"}}})
		}, []wantErr{{A + ".routes[2].match", "the same match as routes[1]"}}},
		{"different matches are not duplicates", func(c *config.Config) {
			addRoute(c, config.Match{Path: config.PathMatch{Exact: "/"}})
			addRoute(c, config.Match{Path: config.PathMatch{Regex: "/"}})
			addRoute(c, config.Match{Path: config.PathMatch{Prefix: "/"}, Headers: []config.HeaderMatch{{Name: "A"}}})
			addRoute(c, config.Match{Path: config.PathMatch{Prefix: "/"}, Headers: []config.HeaderMatch{{Name: "A", Exact: "1"}}})
			addRoute(c, config.Match{Path: config.PathMatch{Prefix: "/"}, Cookies: []config.CookieMatch{{Name: "A"}}})
			addRoute(c, config.Match{Path: config.PathMatch{Prefix: "/"}, Cookies: []config.CookieMatch{{Name: "a"}}})
			addRoute(c, config.Match{Path: config.PathMatch{Prefix: "/"}, Method: "GET"})
			addRoute(c, config.Match{Path: config.PathMatch{Prefix: "/"}, Method: "POST"})
			addRoute(c, config.Match{Path: config.PathMatch{Prefix: "/"}, Query: []config.QueryMatch{{Name: "a"}}})
			addRoute(c, config.Match{Path: config.PathMatch{Prefix: "/"}, Query: []config.QueryMatch{{Name: "A"}}})
		}, nil},
		{"query matchers in another order", func(c *config.Config) {
			addRoute(c, config.Match{Path: config.PathMatch{Prefix: "/y"}, Method: "GET", Query: []config.QueryMatch{{Name: "a"}, {Name: "b", Exact: "1"}}})
			addRoute(c, config.Match{Path: config.PathMatch{Prefix: "/y"}, Method: "GET", Query: []config.QueryMatch{{Name: "b", Exact: "1"}, {Name: "a"}}})
		}, []wantErr{{A + ".routes[2].match", "the same match as routes[1]"}}},

		// match.path
		{"no path", func(c *config.Config) { match(c).Path = config.PathMatch{} },
			[]wantErr{{R0 + ".match.path", "exactly one of exact, prefix and regex is required"}}},
		{"two paths", func(c *config.Config) { match(c).Path = config.PathMatch{Exact: "/a", Regex: "/a"} },
			[]wantErr{{R0 + ".match.path", "exactly one of exact, prefix and regex is required"}}},
		{"exact path not absolute", func(c *config.Config) { match(c).Path = config.PathMatch{Exact: "a"} },
			[]wantErr{{R0 + ".match.path.exact", "must start with /"}}},
		{"prefix path with //", func(c *config.Config) { match(c).Path.Prefix = "/a//b" },
			[]wantErr{{R0 + ".match.path.prefix", "must not hold //"}}},
		{"prefix path with . segment", func(c *config.Config) { match(c).Path.Prefix = "/a/./b" },
			[]wantErr{{R0 + ".match.path.prefix", "must not hold . or .. segments"}}},
		{"exact path with .. segment", func(c *config.Config) { match(c).Path = config.PathMatch{Exact: "/a/.."} },
			[]wantErr{{R0 + ".match.path.exact", "must not hold . or .. segments"}}},
		{"prefix path with ?", func(c *config.Config) { match(c).Path.Prefix = "/search?q=1" },
			[]wantErr{{R0 + ".match.path.prefix", "must not hold '?', '#' or control characters"}}},
		{"prefix path with #", func(c *config.Config) { match(c).Path.Prefix = "/a#top" },
			[]wantErr{{R0 + ".match.path.prefix", "must not hold '?', '#' or control characters"}}},
		{"prefix path with a control character", func(c *config.Config) { match(c).Path.Prefix = "/a\tb" },
			[]wantErr{{R0 + ".match.path.prefix", "must not hold '?', '#' or control characters"}}},
		{"prefix path too long", func(c *config.Config) { match(c).Path.Prefix = "/" + strings.Repeat("a", 4096) },
			[]wantErr{{R0 + ".match.path.prefix", "must be at most 4096 bytes"}}},
		{"regex syntax error", func(c *config.Config) { match(c).Path = config.PathMatch{Regex: "/a("} },
			[]wantErr{{R0 + ".match.path.regex", "invalid regular expression: missing closing )"}}},
		{"regex program over 1 MiB", func(c *config.Config) { match(c).Path = config.PathMatch{Regex: `/\pL{400}`} },
			[]wantErr{{R0 + ".match.path.regex", "more than the limit of 1048576"}}},
		{"regex program over 512 instructions", func(c *config.Config) { match(c).Path = config.PathMatch{Regex: `/.{0,254}x`} },
			[]wantErr{{R0 + ".match.path.regex", "compiles to 513 instructions, more than the limit of 512"}}},
		{"regex program of 512 instructions", func(c *config.Config) { match(c).Path = config.PathMatch{Regex: `/.{0,254}`} }, nil},
		{"regex too long", func(c *config.Config) { match(c).Path = config.PathMatch{Regex: "/" + strings.Repeat("a", 4096)} },
			[]wantErr{{R0 + ".match.path.regex", "must be at most 4096 bytes"}}},

		// match.headers and match.cookies
		{"header name invalid", func(c *config.Config) { match(c).Headers = []config.HeaderMatch{{Name: "X Bad"}} },
			[]wantErr{{R0 + ".match.headers[0].name", `"X Bad" is not a valid header name`}}},
		{"header name empty", func(c *config.Config) { match(c).Headers = []config.HeaderMatch{{Exact: "1"}} },
			[]wantErr{{R0 + ".match.headers[0].name", "is required"}}},
		{"header exact and regex", func(c *config.Config) {
			match(c).Headers = []config.HeaderMatch{{Name: "X", Exact: "a", Regex: "a"}}
		}, []wantErr{{R0 + ".match.headers[0]", "exact and regex exclude each other"}}},
		{"header exact with CR LF", func(c *config.Config) {
			match(c).Headers = []config.HeaderMatch{{Name: "X", Exact: "a\r\nb"}}
		}, []wantErr{{R0 + ".match.headers[0].exact", "must not hold control characters"}}},
		{"header exact too long", func(c *config.Config) {
			match(c).Headers = []config.HeaderMatch{{Name: "X", Exact: strings.Repeat("v", 4097)}}
		}, []wantErr{{R0 + ".match.headers[0].exact", "must be at most 4096 bytes"}}},
		{"header regex invalid", func(c *config.Config) {
			match(c).Headers = []config.HeaderMatch{{Name: "X", Regex: "[a"}}
		}, []wantErr{{R0 + ".match.headers[0].regex", "invalid regular expression: missing closing ]"}}},
		{"header regex too large", func(c *config.Config) {
			match(c).Headers = []config.HeaderMatch{{Name: "X", Regex: `\pL{400}`}}
		}, []wantErr{{R0 + ".match.headers[0].regex", "more than the limit of 1048576"}}},
		{"header regex over 512 instructions", func(c *config.Config) {
			match(c).Headers = []config.HeaderMatch{{Name: "X", Regex: `a{510}`}}
		}, []wantErr{{R0 + ".match.headers[0].regex", "compiles to 514 instructions, more than the limit of 512"}}},
		{"cookie name invalid", func(c *config.Config) { match(c).Cookies = []config.CookieMatch{{Name: "a=b"}} },
			[]wantErr{{R0 + ".match.cookies[0].name", `"a=b" is not a valid cookie name`}}},
		{"cookie name empty", func(c *config.Config) { match(c).Cookies = []config.CookieMatch{{Exact: "1"}} },
			[]wantErr{{R0 + ".match.cookies[0].name", `"" is not a valid cookie name`}}},
		{"cookie exact and regex", func(c *config.Config) {
			match(c).Cookies = []config.CookieMatch{{Name: "c", Exact: "a", Regex: "a"}}
		}, []wantErr{{R0 + ".match.cookies[0]", "exact and regex exclude each other"}}},
		{"cookie exact with NUL", func(c *config.Config) {
			match(c).Cookies = []config.CookieMatch{{Name: "c", Exact: "a\x00"}}
		}, []wantErr{{R0 + ".match.cookies[0].exact", "must not hold control characters"}}},
		{"cookie regex invalid", func(c *config.Config) {
			match(c).Cookies = []config.CookieMatch{{Name: "c", Regex: "a{2,1}"}}
		}, []wantErr{{R0 + ".match.cookies[0].regex", "invalid regular expression"}}},
		{"method lower-case", func(c *config.Config) { match(c).Method = "get" },
			[]wantErr{{R0 + ".match.method", `"get" must be upper-case`}}},
		{"method not a token", func(c *config.Config) { match(c).Method = "GE T" },
			[]wantErr{{R0 + ".match.method", `"GE T" is not a valid method`}}},
		{"method too long", func(c *config.Config) { match(c).Method = strings.Repeat("M", 33) },
			[]wantErr{{R0 + ".match.method", "must be at most 32 bytes"}}},
		{"query name empty", func(c *config.Config) { match(c).Query = []config.QueryMatch{{Exact: "1"}} },
			[]wantErr{{R0 + ".match.query[0].name", "is required"}}},
		{"query name with control character", func(c *config.Config) { match(c).Query = []config.QueryMatch{{Name: "a\n"}} },
			[]wantErr{{R0 + ".match.query[0].name", "must not hold control characters"}}},
		{"query exact and regex", func(c *config.Config) {
			match(c).Query = []config.QueryMatch{{Name: "q", Exact: "a", Regex: "a"}}
		}, []wantErr{{R0 + ".match.query[0]", "exact and regex exclude each other"}}},
		{"query regex invalid", func(c *config.Config) {
			match(c).Query = []config.QueryMatch{{Name: "q", Regex: "a{2,1}"}}
		}, []wantErr{{R0 + ".match.query[0].regex", "invalid regular expression"}}},

		// actions
		{"action with no kind", func(c *config.Config) { route(c).Action = config.Action{} },
			[]wantErr{{R0 + ".action", "exactly one of pool, pools, redirect and respond is required"}}},
		{"action with two kinds", func(c *config.Config) { action(c).Respond = &config.Respond{Status: 200} },
			[]wantErr{{R0 + ".action", "exactly one of pool, pools, redirect and respond is required"}}},
		{"action with redirect and respond", func(c *config.Config) {
			route(c).Action = config.Action{Redirect: &config.Redirect{URL: "/"}, Respond: &config.Respond{Status: 200}}
		}, []wantErr{{R0 + ".action", "exactly one of pool, pools, redirect and respond is required"}}},
		{"unknown pool", func(c *config.Config) { action(c).Pool = "nope" },
			[]wantErr{{R0 + ".action.pool", `no pool "nope" in this tenant`}}},
		{"pool of another tenant", func(c *config.Config) {
			c.Tenants["u"] = &config.Tenant{Pools: map[string]*config.Pool{"q": {}}}
			action(c).Pool = "q"
		}, []wantErr{{R0 + ".action.pool", `no pool "q" in this tenant`}}},
		{"weighted pool unknown", func(c *config.Config) {
			route(c).Action = config.Action{Pools: []config.WeightedPool{{Pool: "p", Weight: 1}, {Pool: "nope", Weight: 1}}}
		}, []wantErr{{R0 + ".action.pools[1].pool", `no pool "nope" in this tenant`}}},
		{"weighted pools all zero", func(c *config.Config) {
			route(c).Action = config.Action{Pools: []config.WeightedPool{{Pool: "p", Weight: 0}, {Pool: "p", Weight: 0}}}
		}, []wantErr{{R0 + ".action.pools", "at least one weight must be above 0"}}},
		{"weighted pool weight too large", func(c *config.Config) {
			route(c).Action = config.Action{Pools: []config.WeightedPool{{Pool: "p", Weight: 1_000_001}}}
		}, []wantErr{{R0 + ".action.pools[0].weight", "must be 0..1000000"}}},
		{"sticky weighted pools", func(c *config.Config) {
			route(c).Action = config.Action{Pools: []config.WeightedPool{{Pool: "p", Weight: 1}, {Pool: "p"}}, Sticky: true}
		}, nil},
		{"sticky single pool", func(c *config.Config) { action(c).Sticky = true },
			[]wantErr{{R0 + ".action.sticky", "only applies to pools"}}},
		{"weighted pool weight 1000000", func(c *config.Config) {
			route(c).Action = config.Action{Pools: []config.WeightedPool{{Pool: "p", Weight: 1_000_000}, {Pool: "p"}}}
		}, nil},
		{"redirect that changes nothing", func(c *config.Config) { route(c).Action = config.Action{Redirect: &config.Redirect{Code: 302}} },
			[]wantErr{{R0 + ".action.redirect", "url, or one of scheme, hostname, port, path and path_prefix, is required"}}},
		{"redirect url with structured fields", func(c *config.Config) {
			route(c).Action = config.Action{Redirect: &config.Redirect{URL: "/x", Scheme: "https"}}
		}, []wantErr{{R0 + ".action.redirect.url", "excludes scheme, hostname, port, path, path_prefix and trim_trailing_slash"}}},
		{"redirect url with trim_trailing_slash", func(c *config.Config) {
			route(c).Action = config.Action{Redirect: &config.Redirect{URL: "/x", TrimTrailingSlash: true}}
		}, []wantErr{{R0 + ".action.redirect.url", "excludes scheme"}}},
		{"redirect structured", func(c *config.Config) {
			route(c).Action = config.Action{Redirect: &config.Redirect{Scheme: "https", Hostname: "example.org", Port: 8443, PathPrefix: new(""), Code: 308}}
		}, nil},
		{"redirect scheme unknown", func(c *config.Config) { route(c).Action = config.Action{Redirect: &config.Redirect{Scheme: "ftp"}} },
			[]wantErr{{R0 + ".action.redirect.scheme", `must be http or https, not "ftp"`}}},
		{"redirect hostname wildcard", func(c *config.Config) {
			route(c).Action = config.Action{Redirect: &config.Redirect{Hostname: "*.a.test"}}
		},
			[]wantErr{{R0 + ".action.redirect.hostname", `"*.a.test" is not a lower-case domain name without a wildcard`}}},
		{"redirect hostname deep wildcard", func(c *config.Config) {
			route(c).Action = config.Action{Redirect: &config.Redirect{Hostname: "**.a.test"}}
		},
			[]wantErr{{R0 + ".action.redirect.hostname", `"**.a.test" is not a lower-case domain name without a wildcard`}}},
		{"redirect hostname with a port", func(c *config.Config) {
			route(c).Action = config.Action{Redirect: &config.Redirect{Hostname: "a.test:80"}}
		},
			[]wantErr{{R0 + ".action.redirect.hostname", "is not a lower-case domain name"}}},
		{"redirect port over 65535", func(c *config.Config) { route(c).Action = config.Action{Redirect: &config.Redirect{Port: 65536}} },
			[]wantErr{{R0 + ".action.redirect.port", "must be 1..65535"}}},
		{"redirect path relative", func(c *config.Config) { route(c).Action = config.Action{Redirect: &config.Redirect{Path: "x"}} },
			[]wantErr{{R0 + ".action.redirect.path", "must start with /"}}},
		{"redirect path with a query", func(c *config.Config) { route(c).Action = config.Action{Redirect: &config.Redirect{Path: "/x?y"}} },
			[]wantErr{{R0 + ".action.redirect.path", "must not hold a query or a fragment"}}},
		{"redirect path and path_prefix", func(c *config.Config) {
			route(c).Action = config.Action{Redirect: &config.Redirect{Path: "/x", PathPrefix: new("/y")}}
		}, []wantErr{{R0 + ".action.redirect", "path and path_prefix exclude each other"}}},
		{"redirect path_prefix relative", func(c *config.Config) {
			route(c).Action = config.Action{Redirect: &config.Redirect{PathPrefix: new("y")}}
		}, []wantErr{{R0 + ".action.redirect.path_prefix", "must start with /"}}},
		{"redirect path_prefix on an exact route", func(c *config.Config) {
			match(c).Path = config.PathMatch{Exact: "/x"}
			route(c).Action = config.Action{Redirect: &config.Redirect{PathPrefix: new("/y")}}
		}, []wantErr{{R0 + ".action.redirect.path_prefix", "this route's path match is not a prefix"}}},
		{"redirect path_prefix on a default route", func(c *config.Config) {
			app(c).DefaultRoute = &config.DefaultRoute{Action: config.Action{Redirect: &config.Redirect{PathPrefix: new("/y")}}}
		}, []wantErr{{A + ".default_route.action.redirect.path_prefix", "this route's path match is not a prefix"}}},
		{"redirect url with CR LF", func(c *config.Config) {
			route(c).Action = config.Action{Redirect: &config.Redirect{URL: "https://example.com/\r\nSet-Cookie: a=b"}}
		}, []wantErr{{R0 + ".action.redirect.url", "must not hold control characters"}}},
		{"redirect url too long", func(c *config.Config) {
			route(c).Action = config.Action{Redirect: &config.Redirect{URL: "/" + strings.Repeat("u", 4096)}}
		}, []wantErr{{R0 + ".action.redirect.url", "must be at most 4096 bytes"}}},
		{"redirect code 200", func(c *config.Config) {
			route(c).Action = config.Action{Redirect: &config.Redirect{URL: "/", Code: 200}}
		}, []wantErr{{R0 + ".action.redirect.code", "must be 301, 302, 303, 307 or 308"}}},
		{"redirect code 304", func(c *config.Config) {
			route(c).Action = config.Action{Redirect: &config.Redirect{URL: "/", Code: 304}}
		}, []wantErr{{R0 + ".action.redirect.code", "must be 301, 302, 303, 307 or 308"}}},
		{"respond status 199", func(c *config.Config) { route(c).Action = config.Action{Respond: &config.Respond{Status: 199}} },
			[]wantErr{{R0 + ".action.respond.status", "must be 200..599"}}},
		{"respond status 600", func(c *config.Config) { route(c).Action = config.Action{Respond: &config.Respond{Status: 600}} },
			[]wantErr{{R0 + ".action.respond.status", "must be 200..599"}}},
		{"respond status missing", func(c *config.Config) { route(c).Action = config.Action{Respond: &config.Respond{Body: "x"}} },
			[]wantErr{{R0 + ".action.respond.status", "must be 200..599"}}},
		{"respond content type with LF", func(c *config.Config) {
			route(c).Action = config.Action{Respond: &config.Respond{Status: 200, ContentType: "text/plain\nX: y"}}
		}, []wantErr{{R0 + ".action.respond.content_type", "must not hold control characters"}}},
		{"respond body too large", func(c *config.Config) {
			route(c).Action = config.Action{Respond: &config.Respond{Status: 200, Body: strings.Repeat("b", 64<<10+1)}}
		}, []wantErr{{R0 + ".action.respond.body", "must be at most 65536 bytes"}}},
		{"respond body of 64KiB", func(c *config.Config) {
			route(c).Action = config.Action{Respond: &config.Respond{Status: 599, Body: strings.Repeat("b", 64<<10)}}
		}, nil},
		{"tenant default route without action", func(c *config.Config) { tenant(c).DefaultRoute = &config.DefaultRoute{} },
			[]wantErr{{"tenants.t.default_route.action", "exactly one of pool, pools, redirect and respond is required"}}},
		{"tenant default route unknown pool", func(c *config.Config) {
			tenant(c).DefaultRoute = &config.DefaultRoute{Action: config.Action{Pool: "nope"}}
		}, []wantErr{{"tenants.t.default_route.action.pool", `no pool "nope" in this tenant`}}},
		{"application default route with two kinds", func(c *config.Config) {
			app(c).DefaultRoute = &config.DefaultRoute{Action: config.Action{Pool: "p", Pools: []config.WeightedPool{{Pool: "p", Weight: 1}}}}
		}, []wantErr{{A + ".default_route.action", "exactly one of pool, pools, redirect and respond is required"}}},
		{"application default route bad redirect", func(c *config.Config) {
			app(c).DefaultRoute = &config.DefaultRoute{Action: config.Action{Redirect: &config.Redirect{URL: "/", Code: 399}}}
		}, []wantErr{{A + ".default_route.action.redirect.code", "must be 301, 302, 303, 307 or 308"}}},

		// pools: scheme and tls
		{"pool scheme unknown", func(c *config.Config) { pool(c).Scheme = "ftp" },
			[]wantErr{{P + ".scheme", "must be http, https, h2c or h2"}}},
		{"pool scheme upper case", func(c *config.Config) { pool(c).Scheme = "HTTPS" },
			[]wantErr{{P + ".scheme", "must be http, https, h2c or h2"}}},
		{"pool tls on http", func(c *config.Config) {
			pool(c).Scheme = config.SchemeHTTP
			pool(c).TLS = &config.PoolTLS{}
		}, []wantErr{{P + ".tls", "only applies to the schemes https and h2"}}},
		{"pool tls on the default scheme", func(c *config.Config) { pool(c).TLS = &config.PoolTLS{} },
			[]wantErr{{P + ".tls", "only applies to the schemes https and h2"}}},
		{"pool tls on h2c", func(c *config.Config) {
			pool(c).Scheme = config.SchemeH2C
			pool(c).TLS = &config.PoolTLS{CAFile: "ca.pem"}
		}, []wantErr{{P + ".tls", "only applies to the schemes https and h2"}}},
		{"pool tls server_name invalid", func(c *config.Config) {
			pool(c).Scheme = config.SchemeHTTPS
			pool(c).TLS = &config.PoolTLS{ServerName: "bad_name.internal"}
		}, []wantErr{{P + ".tls.server_name", `"bad_name.internal" is not a domain name`}}},
		{"pool tls server_name IP address", func(c *config.Config) {
			pool(c).Scheme = config.SchemeH2
			pool(c).TLS = &config.PoolTLS{ServerName: "10.0.0.1"}
		}, nil},
		{"pool tls server_name wildcard", func(c *config.Config) {
			// A wildcard is not a name a client may send or verify: Go's
			// x509 refuses '*' in the host it checks, so every handshake
			// would fail.
			pool(c).Scheme = config.SchemeHTTPS
			pool(c).TLS = &config.PoolTLS{ServerName: "*.example.com"}
		}, []wantErr{{P + ".tls.server_name", "*.example.com"}}},
		{"pool tls without verification", func(c *config.Config) {
			pool(c).Scheme = config.SchemeHTTPS
			pool(c).TLS = &config.PoolTLS{InsecureSkipVerify: true, ServerName: "api.internal", CertFile: "client.crt", KeyFile: "client.key"}
		}, nil},
		{"pool tls without verification and a CA", func(c *config.Config) {
			pool(c).Scheme = config.SchemeH2
			pool(c).TLS = &config.PoolTLS{InsecureSkipVerify: true, CAFile: "ca.pem"}
		}, []wantErr{{P + ".tls.ca_file", "is not used with insecure_skip_verify"}}},
		{"pool tls without verification on http", func(c *config.Config) {
			pool(c).TLS = &config.PoolTLS{InsecureSkipVerify: true}
		}, []wantErr{{P + ".tls", "only applies to the schemes https and h2"}}},
		{"pool tls client certificate", func(c *config.Config) {
			pool(c).Scheme = config.SchemeHTTPS
			pool(c).TLS = &config.PoolTLS{CAFile: "ca.pem", CertFile: "client.crt", KeyFile: "client.key"}
		}, nil},
		{"pool tls client certificate on h2 without ca_file", func(c *config.Config) {
			pool(c).Scheme = config.SchemeH2
			pool(c).TLS = &config.PoolTLS{CertFile: "client.crt", KeyFile: "client.key"}
		}, nil},
		{"pool tls cert_file without key_file", func(c *config.Config) {
			pool(c).Scheme = config.SchemeHTTPS
			pool(c).TLS = &config.PoolTLS{CertFile: "client.crt"}
		}, []wantErr{{P + ".tls", "cert_file and key_file go together"}}},
		{"pool tls key_file without cert_file", func(c *config.Config) {
			pool(c).Scheme = config.SchemeH2
			pool(c).TLS = &config.PoolTLS{CAFile: "ca.pem", KeyFile: "client.key"}
		}, []wantErr{{P + ".tls", "cert_file and key_file go together"}}},
		{"pool tls client certificate on http", func(c *config.Config) {
			pool(c).TLS = &config.PoolTLS{CertFile: "client.crt", KeyFile: "client.key"}
		}, []wantErr{{P + ".tls", "only applies to the schemes https and h2"}}},
		{"pool tls client certificate on h2c", func(c *config.Config) {
			pool(c).Scheme = config.SchemeH2C
			pool(c).TLS = &config.PoolTLS{CertFile: "client.crt", KeyFile: "client.key"}
		}, []wantErr{{P + ".tls", "only applies to the schemes https and h2"}}},
		{"pool members_from unknown", func(c *config.Config) { pool(c).MembersFrom = "dynamic" },
			[]wantErr{{P + ".members_from", "must be static or api"}}},

		// pools: members
		{"member without port", func(c *config.Config) { pool(c).Members[0].Address = "10.0.0.1" },
			[]wantErr{{P + ".members[0].address", `"10.0.0.1" is not host:port`}}},
		{"member port 0", func(c *config.Config) { pool(c).Members[0].Address = "10.0.0.1:0" },
			[]wantErr{{P + ".members[0].address", `"10.0.0.1:0": port must be 1..65535`}}},
		{"member port 65536", func(c *config.Config) { pool(c).Members[0].Address = "backend:65536" },
			[]wantErr{{P + ".members[0].address", "port must be 1..65535"}}},
		{"member host invalid", func(c *config.Config) { pool(c).Members[0].Address = "bad_host:80" },
			[]wantErr{{P + ".members[0].address", "host is neither an IP address nor a DNS name"}}},
		{"member wildcard host", func(c *config.Config) { pool(c).Members[0].Address = "*.example.com:80" },
			[]wantErr{{P + ".members[0].address", "host is neither an IP address nor a DNS name"}}},
		{"member deep wildcard host", func(c *config.Config) { pool(c).Members[0].Address = "**.example.com:80" },
			[]wantErr{{P + ".members[0].address", "host is neither an IP address nor a DNS name"}}},
		{"member zoned IPv6", func(c *config.Config) { pool(c).Members[0].Address = "[fe80::1%eth0]:80" },
			[]wantErr{{P + ".members[0].address", "zoned addresses are not supported"}}},
		{"member duplicate", func(c *config.Config) {
			pool(c).Members = append(pool(c).Members, config.Member{Address: "10.0.0.2:80"}, config.Member{Address: "10.0.0.1:80", Weight: 2})
		}, []wantErr{{P + ".members[2].address", "10.0.0.1:80 is listed twice"}}},
		{"member weight over 1000", func(c *config.Config) { pool(c).Members[0].Weight = 1001 },
			[]wantErr{{P + ".members[0].weight", "must be 1..1000"}}},
		{"member weight 1000 and IPv6", func(c *config.Config) {
			pool(c).Members = []config.Member{{Address: "[2001:db8::1]:443", Weight: 1000}, {Address: "Backend.internal:80"}}
		}, nil},
		{"no members", func(c *config.Config) { pool(c).Members = nil }, nil},

		// pools: balance and hash
		{"balance unknown", func(c *config.Config) { pool(c).Balance = "random" },
			[]wantErr{{P + ".balance", "must be round_robin, least_conn or hash"}}},
		{"hash with round_robin", func(c *config.Config) {
			pool(c).Balance = config.BalanceRoundRobin
			pool(c).Hash = &config.Hash{By: config.HashByClientIP}
		}, []wantErr{{P + ".hash", "only applies to balance: hash"}}},
		{"hash with least_conn", func(c *config.Config) {
			pool(c).Balance = config.BalanceLeastConn
			pool(c).Hash = &config.Hash{By: config.HashByClientIP}
		}, []wantErr{{P + ".hash", "only applies to balance: hash"}}},
		{"hash with the default balance", func(c *config.Config) { pool(c).Hash = &config.Hash{By: config.HashByClientIP} },
			[]wantErr{{P + ".hash", "only applies to balance: hash"}}},
		{"balance hash without hash", func(c *config.Config) { pool(c).Balance = config.BalanceHash },
			[]wantErr{{P + ".hash", "is required with balance: hash"}}},
		{"hash by missing", func(c *config.Config) {
			pool(c).Balance = config.BalanceHash
			pool(c).Hash = &config.Hash{}
		}, []wantErr{{P + ".hash.by", "must be client_ip, header, cookie, cookie_value or request_uri"}}},
		{"hash by unknown", func(c *config.Config) {
			pool(c).Balance = config.BalanceHash
			pool(c).Hash = &config.Hash{By: "uri"}
		}, []wantErr{{P + ".hash.by", "must be client_ip, header, cookie, cookie_value or request_uri"}}},
		{"hash by header without header", func(c *config.Config) {
			pool(c).Balance = config.BalanceHash
			pool(c).Hash = &config.Hash{By: config.HashByHeader}
		}, []wantErr{{P + ".hash.header", "is required"}}},
		{"hash by header with a bad header", func(c *config.Config) {
			pool(c).Balance = config.BalanceHash
			pool(c).Hash = &config.Hash{By: config.HashByHeader, Header: "X User"}
		}, []wantErr{{P + ".hash.header", `"X User" is not a valid header name`}}},
		{"hash header with by client_ip", func(c *config.Config) {
			pool(c).Balance = config.BalanceHash
			pool(c).Hash = &config.Hash{By: config.HashByClientIP, Header: "X-User"}
		}, []wantErr{{P + ".hash.header", "only applies to by: header"}}},
		{"hash cookie with by header", func(c *config.Config) {
			pool(c).Balance = config.BalanceHash
			pool(c).Hash = &config.Hash{By: config.HashByHeader, Header: "X-User", Cookie: &config.AffinityCookie{}}
		}, []wantErr{{P + ".hash.cookie", "only applies to by: cookie"}}},
		{"hash by cookie_value", func(c *config.Config) { hashBy(c, config.Hash{By: config.HashByCookieValue, CookieName: "session_id"}) }, nil},
		{"hash by cookie_value with every token character", func(c *config.Config) {
			hashBy(c, config.Hash{By: config.HashByCookieValue, CookieName: "a!#$%&'*+-.^_`|~9Z"})
		}, nil},
		{"hash by cookie_value without cookie_name", func(c *config.Config) { hashBy(c, config.Hash{By: config.HashByCookieValue}) },
			[]wantErr{{P + ".hash.cookie_name", "is required with by: cookie_value"}}},
		{"hash by cookie_value with a space in the name", func(c *config.Config) {
			hashBy(c, config.Hash{By: config.HashByCookieValue, CookieName: "my cookie"})
		}, []wantErr{{P + ".hash.cookie_name", `"my cookie" is not a valid cookie name`}}},
		{"hash by cookie_value with = in the name", func(c *config.Config) {
			hashBy(c, config.Hash{By: config.HashByCookieValue, CookieName: "a=b"})
		}, []wantErr{{P + ".hash.cookie_name", `"a=b" is not a valid cookie name`}}},
		{"hash by cookie_value with ; in the name", func(c *config.Config) {
			hashBy(c, config.Hash{By: config.HashByCookieValue, CookieName: "a;b"})
		}, []wantErr{{P + ".hash.cookie_name", `"a;b" is not a valid cookie name`}}},
		{"hash by cookie_value with a non-ASCII name", func(c *config.Config) {
			hashBy(c, config.Hash{By: config.HashByCookieValue, CookieName: "sessión"})
		}, []wantErr{{P + ".hash.cookie_name", "is not a valid cookie name"}}},
		{"hash by cookie_value with a header", func(c *config.Config) {
			hashBy(c, config.Hash{By: config.HashByCookieValue, CookieName: "sid", Header: "X-User"})
		}, []wantErr{{P + ".hash.header", "only applies to by: header"}}},
		{"hash by cookie_value with cookie settings", func(c *config.Config) {
			hashBy(c, config.Hash{By: config.HashByCookieValue, CookieName: "sid", Cookie: &config.AffinityCookie{Name: "sid"}})
		}, []wantErr{{P + ".hash.cookie", "only applies to by: cookie"}}},
		{"hash cookie_name with by cookie", func(c *config.Config) {
			hashBy(c, config.Hash{By: config.HashByCookie, CookieName: "sid"})
		}, []wantErr{{P + ".hash.cookie_name", "only applies to by: cookie_value"}}},
		{"hash cookie_name with by header", func(c *config.Config) {
			hashBy(c, config.Hash{By: config.HashByHeader, Header: "X-User", CookieName: "sid"})
		}, []wantErr{{P + ".hash.cookie_name", "only applies to by: cookie_value"}}},
		{"hash by request_uri", func(c *config.Config) { hashBy(c, config.Hash{By: config.HashByRequestURI}) }, nil},
		{"hash by request_uri with a header", func(c *config.Config) {
			hashBy(c, config.Hash{By: config.HashByRequestURI, Header: "X-User"})
		}, []wantErr{{P + ".hash.header", "only applies to by: header"}}},
		{"hash by request_uri with a cookie_name", func(c *config.Config) {
			hashBy(c, config.Hash{By: config.HashByRequestURI, CookieName: "sid"})
		}, []wantErr{{P + ".hash.cookie_name", "only applies to by: cookie_value"}}},
		{"hash by request_uri with cookie settings", func(c *config.Config) {
			hashBy(c, config.Hash{By: config.HashByRequestURI, Cookie: &config.AffinityCookie{}})
		}, []wantErr{{P + ".hash.cookie", "only applies to by: cookie"}}},
		{"hash by upper case", func(c *config.Config) { hashBy(c, config.Hash{By: "REQUEST_URI"}) },
			[]wantErr{{P + ".hash.by", "must be client_ip, header, cookie, cookie_value or request_uri"}}},
		{"hash by cookie with defaults", func(c *config.Config) { hashByCookie(c, config.AffinityCookie{}) }, nil},
		{"hash by cookie persistent", func(c *config.Config) {
			hashByCookie(c, config.AffinityCookie{Mode: config.AffinityPersistent, ChangeOnFailure: true})
		}, nil},
		{"hash by cookie in an unknown mode", func(c *config.Config) { hashByCookie(c, config.AffinityCookie{Mode: "Persistent"}) },
			[]wantErr{{P + ".hash.cookie.mode", "must be balanced or persistent"}}},
		{"hash subset", func(c *config.Config) { hashBy(c, config.Hash{By: config.HashByClientIP, SubsetSize: 3}) }, nil},
		{"hash subset too large", func(c *config.Config) { hashBy(c, config.Hash{By: config.HashByClientIP, SubsetSize: 1001}) },
			[]wantErr{{P + ".hash.subset_size", "must be 0..1000"}}},
		{"hash subset negative", func(c *config.Config) { hashBy(c, config.Hash{By: config.HashByRequestURI, SubsetSize: -1}) },
			[]wantErr{{P + ".hash.subset_size", "must be 0..1000"}}},
		{"hash subset by cookie", func(c *config.Config) {
			pool(c).Balance = config.BalanceHash
			pool(c).Hash = &config.Hash{By: config.HashByCookie, SubsetSize: 3}
		}, []wantErr{{P + ".hash.subset_size", "does not apply to by: cookie"}}},

		{"hash by cookie without cookie settings", func(c *config.Config) {
			pool(c).Balance = config.BalanceHash
			pool(c).Hash = &config.Hash{By: config.HashByCookie}
		}, nil},

		// pools: affinity cookie
		{"affinity cookie name invalid", func(c *config.Config) { hashByCookie(c, config.AffinityCookie{Name: "my cookie"}) },
			[]wantErr{{P + ".hash.cookie.name", `"my cookie" is not a valid cookie name`}}},
		{"affinity cookie path not absolute", func(c *config.Config) { hashByCookie(c, config.AffinityCookie{Path: "app"}) },
			[]wantErr{{P + ".hash.cookie.path", "must start with / and hold no ';', spaces or control characters"}}},
		{"affinity cookie path with ;", func(c *config.Config) { hashByCookie(c, config.AffinityCookie{Path: "/a;Domain=evil"}) },
			[]wantErr{{P + ".hash.cookie.path", "must start with /"}}},
		{"affinity cookie path with space", func(c *config.Config) { hashByCookie(c, config.AffinityCookie{Path: "/a b"}) },
			[]wantErr{{P + ".hash.cookie.path", "must start with /"}}},
		{"affinity cookie domain upper case", func(c *config.Config) { hashByCookie(c, config.AffinityCookie{Domain: "Example.com"}) },
			[]wantErr{{P + ".hash.cookie.domain", `"Example.com" is not a domain`}}},
		{"affinity cookie domain with port", func(c *config.Config) { hashByCookie(c, config.AffinityCookie{Domain: "example.com:443"}) },
			[]wantErr{{P + ".hash.cookie.domain", `"example.com:443" is not a domain`}}},
		{"affinity cookie domain wildcard", func(c *config.Config) {
			// A cookie's Domain attribute has no wildcard syntax; net/http
			// drops such a Domain, silently making the cookie host-only.
			hashByCookie(c, config.AffinityCookie{Domain: "*.example.com"})
		}, []wantErr{{P + ".hash.cookie.domain", `"*.example.com" is not a domain`}}},
		{"affinity cookie domain deep wildcard", func(c *config.Config) {
			hashByCookie(c, config.AffinityCookie{Domain: "**.example.com"})
		}, []wantErr{{P + ".hash.cookie.domain", `"**.example.com" is not a domain`}}},
		{"affinity cookie same_site lower case", func(c *config.Config) { hashByCookie(c, config.AffinityCookie{SameSite: "lax"}) },
			[]wantErr{{P + ".hash.cookie.same_site", "must be Lax, Strict or None"}}},
		{"affinity cookie with every setting", func(c *config.Config) {
			hashByCookie(c, config.AffinityCookie{Name: "S", Path: "/app", Domain: ".example.com", MaxAge: config.Duration(time.Hour), Secure: true, SameSite: "None"})
		}, nil},

		// pools: retries and timeouts
		{"retries -1", func(c *config.Config) { pool(c).Retries = intp(-1) },
			[]wantErr{{P + ".retries", "must be 0..10"}}},
		{"retries 11", func(c *config.Config) { pool(c).Retries = intp(11) },
			[]wantErr{{P + ".retries", "must be 0..10"}}},
		{"retries 0", func(c *config.Config) { pool(c).Retries = intp(0) }, nil},
		{"retries 10", func(c *config.Config) { pool(c).Retries = intp(10) }, nil},
		{"connect_timeout above 5m", func(c *config.Config) { pool(c).ConnectTimeout = config.Duration(5*time.Minute + time.Second) },
			[]wantErr{{P + ".connect_timeout", "must be at most 5m"}}},
		{"response_timeout above 24h", func(c *config.Config) { pool(c).ResponseTimeout = config.Duration(24*time.Hour + time.Second) },
			[]wantErr{{P + ".response_timeout", "must be at most 24h"}}},
		{"timeouts at their limits", func(c *config.Config) {
			pool(c).ConnectTimeout = config.Duration(5 * time.Minute)
			pool(c).ResponseTimeout = config.Duration(24 * time.Hour)
		}, nil},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		if seen[tc.name] {
			t.Fatalf("two cases named %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.mutate(c)
			checkFieldErrors(t, c.Validate(), tc.want)
		})
	}
}

// TestValidateRegexBudget gives a file many path regexes of just under the
// per-expression limit, each in its own application (so that no
// application's instruction budget is spent): the first 64 always fit in
// the 64 MiB budget, and once it is spent every further regex is refused.
func TestValidateRegexBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles about 70 MiB of regular expressions")
	}
	const n = 72
	c := base()
	for i := range n {
		// \pL{190} compiles to just under 1 MiB.
		re := fmt.Sprintf(`/r%d/\pL{190}`, i)
		if _, err := config.CompilePathRegex(re); err != nil {
			t.Fatalf("CompilePathRegex(%q): got %v, want it under the per-expression limit", re, err)
		}
		c.Tenants["t"].Applications[fmt.Sprintf("r%02d", i)] = &config.Application{
			Domains: []string{fmt.Sprintf("r%02d.example.com", i)},
			Routes:  []*config.Route{{Match: config.Match{Path: config.PathMatch{Regex: re}}, Action: config.Action{Pool: "p"}}},
		}
	}
	errs := fieldErrors(t, c.Validate())
	if len(errs) == 0 {
		t.Fatalf("Validate with %d regexes of ~1 MiB: got no error, want the budget of %d bytes exceeded", n, config.MaxRegexBudgetBytes)
	}
	first := len(errs)
	for i, e := range errs {
		var idx int
		if _, err := fmt.Sscanf(e.Path, "tenants.t.applications.r%02d.routes[0].match.path.regex", &idx); err != nil || !strings.Contains(e.Message, "compile to more than 67108864 bytes together") {
			t.Errorf("Validate: got %q, want only budget errors at r<k>.routes[0].match.path.regex", e)
			continue
		}
		if i == 0 {
			first = idx
		}
		if want := first + i; idx != want {
			t.Errorf("Validate: budget error %d in application r%02d, want r%02d (every regex after the first refused one)", i, idx, want)
		}
	}
	if first < 64 || first+len(errs) != n {
		t.Errorf("Validate: budget errors for r%02d..r%02d, want the first from r64 on and every one up to r%02d", first, first+len(errs)-1, n-1)
	}
}

// TestValidateApplicationRegexBudget checks the instructions the regexes of
// one application may hold together: the work budget over
// max_regex_input_bytes (512 by default). Over it, the route whose regexes
// cross it is named, with its path.
func TestValidateApplicationRegexBudget(t *testing.T) {
	// re compiles to 256 instructions (two letters, 125 optional dots and
	// the wrapper); two of them fill the default budget of 512.
	re := func(name string) string { return "/" + name + name + ".{0,125}" }
	tests := []struct {
		name   string
		mutate func(c *config.Config)
		want   []wantErr
	}{
		{"two regexes at the budget", func(c *config.Config) {
			addRoute(c, config.Match{Path: config.PathMatch{Regex: re("a")}})
			addRoute(c, config.Match{Path: config.PathMatch{Regex: re("b")}})
		}, nil},
		{"a third regex over it", func(c *config.Config) {
			addRoute(c, config.Match{Path: config.PathMatch{Regex: re("a")}})
			addRoute(c, config.Match{Path: config.PathMatch{Regex: re("b")}})
			addRoute(c, config.Match{Path: config.PathMatch{Regex: "/c"}})
		}, []wantErr{{A + ".routes[3].match", `with the path regex "/c", the regexes of this application compile to more than the 512 instructions one request may run ` +
			`(4194304 instruction-bytes over server.limits.max_regex_input_bytes), 517 in all: remove or simplify regex routes, or lower max_regex_input_bytes`}}},
		{"only the crossing route is named", func(c *config.Config) {
			for _, n := range []string{"a", "b", "c", "d"} {
				addRoute(c, config.Match{Path: config.PathMatch{Regex: re(n)}})
			}
		}, []wantErr{{A + ".routes[3].match", `with the path regex "/cc.{0,125}", the regexes of this application compile to more than the 512 instructions`}}},
		{"header regexes count", func(c *config.Config) {
			addRoute(c, config.Match{Path: config.PathMatch{Regex: re("a")}})
			addRoute(c, config.Match{Path: config.PathMatch{Regex: re("b")}})
			addRoute(c, config.Match{Path: config.PathMatch{Prefix: "/b"}, Headers: []config.HeaderMatch{{Name: "X", Regex: ".{0,1}"}}})
		}, []wantErr{{A + ".routes[3].match", "with the header, cookie and query regexes of the route, the regexes of this application compile to more than the 512"}}},
		{"cookie regexes count", func(c *config.Config) {
			addRoute(c, config.Match{Path: config.PathMatch{Regex: re("a")}, Cookies: []config.CookieMatch{{Name: "c", Regex: ".{0,126}"}}})
			addRoute(c, config.Match{Path: config.PathMatch{Regex: re("b")}, Cookies: []config.CookieMatch{{Name: "c", Regex: "x"}}})
		}, []wantErr{{A + ".routes[2].match", `with the path regex "/bb.{0,125}", the regexes of this application compile to more than the 512`}}},
		{"a lower input bound takes more", func(c *config.Config) {
			c.Server.Limits.MaxRegexInputBytes = 4 << 10
			for _, n := range []string{"a", "b", "c", "d"} {
				addRoute(c, config.Match{Path: config.PathMatch{Regex: re(n)}})
			}
		}, nil},
		{"a higher input bound takes less", func(c *config.Config) {
			c.Server.Limits.MaxRegexInputBytes = 16 << 10
			addRoute(c, config.Match{Path: config.PathMatch{Regex: re("a")}})
			addRoute(c, config.Match{Path: config.PathMatch{Regex: re("b")}})
		}, []wantErr{{A + ".routes[2].match", "more than the 256 instructions one request may run"}}},
		{"each application has its own budget", func(c *config.Config) {
			addRoute(c, config.Match{Path: config.PathMatch{Regex: re("a")}})
			addRoute(c, config.Match{Path: config.PathMatch{Regex: re("b")}})
			c.Tenants["t"].Applications["other"] = &config.Application{
				Domains: []string{"other.example.com"},
				Routes: []*config.Route{
					{Match: config.Match{Path: config.PathMatch{Regex: re("a")}}, Action: config.Action{Pool: "p"}},
					{Match: config.Match{Path: config.PathMatch{Regex: re("b")}}, Action: config.Action{Pool: "p"}},
				},
			}
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.mutate(c)
			checkFieldErrors(t, c.Validate(), tc.want)
		})
	}
}

// TestValidateReportsEverything checks that a file with five problems in
// five places gets exactly those five errors, in the same order each time.
func TestValidateReportsEverything(t *testing.T) {
	want := []wantErr{
		{"server.listeners.http.address", `port "99999" must be a number 0..65535`},
		{"server.trusted_proxies[0]", `"10.0.0.0/40" is not a CIDR`},
		{"tenants.shop.pools.api.retries", "must be 0..10"},
		{"tenants.shop.applications.web.domains[0]", `"Shop.Example.com" is not a domain name: must be lower case`},
		{"tenants.shop.applications.web.routes[0].action.pool", `no pool "apo" in this tenant`},
	}
	cfg := mustDecode(t, "five_problems.yaml")
	first := cfg.Validate()
	checkFieldErrors(t, first, want)
	if first == nil {
		return
	}
	if n := strings.Count(first.Error(), "\n") + 1; n != len(want) {
		t.Errorf("Validate error text: got %d lines, want one per problem (%d):\n%v", n, len(want), first)
	}
	for i := range 20 {
		again := mustDecode(t, "five_problems.yaml").Validate()
		if again == nil || again.Error() != first.Error() {
			t.Fatalf("Validate run %d: got\n%v\nwant the same as the first run:\n%v", i+2, again, first)
		}
		if again := cfg.Validate(); again == nil || again.Error() != first.Error() {
			t.Fatalf("Validate run %d on the same config: got\n%v\nwant\n%v", i+2, again, first)
		}
	}
}

// TestValidateDeterministicWithManyKeys builds maps large enough that Go's
// random map order would show in an unsorted walk.
func TestValidateDeterministicWithManyKeys(t *testing.T) {
	c := base()
	for i := range 30 {
		name := fmt.Sprintf("x%02d", i)
		c.Server.Listeners[name] = &config.Listener{Address: fmt.Sprintf(":%d", 70000+i)}
		c.Tenants[name] = &config.Tenant{
			Applications: map[string]*config.Application{"a": {Domains: []string{"dup.example.com"}}},
			Pools:        map[string]*config.Pool{"shared": {Retries: intp(-1)}},
		}
	}
	first := c.Validate()
	if got := len(config.Errors(first)); got != 30+30+29+29 {
		t.Fatalf("Validate: got %d errors, want %d (30 ports, 30 retries, 29 shared pools, 29 duplicate domains):\n%v", got, 30+30+29+29, first)
	}
	for i := range 20 {
		if again := c.Validate(); again.Error() != first.Error() {
			t.Fatalf("Validate run %d: got\n%v\nwant\n%v", i+2, again, first)
		}
	}
}

func TestErrors(t *testing.T) {
	if got := config.Errors(nil); got != nil {
		t.Errorf("Errors(nil): got %v, want nil", got)
	}
	single := errors.New("alone")
	if got := config.Errors(single); len(got) != 1 || got[0] != single {
		t.Errorf("Errors(single): got %v, want [single]", got)
	}
	err := config.ValidateMembers([]config.Member{{Address: "x"}, {Address: "y:0"}}, false)
	if got := len(config.Errors(err)); got != 2 {
		t.Errorf("Errors(ValidateMembers(2 bad)): got %d errors (%v), want 2", got, err)
	}
}

func TestValidateMembers(t *testing.T) {
	tests := []struct {
		name     string
		members  []config.Member
		loopback bool
		want     []wantErr
	}{
		{"none", nil, false, nil},
		{"valid", []config.Member{{Address: "10.0.0.1:80", Weight: 1}, {Address: "[2001:db8::1]:80", Weight: 1000}, {Address: "svc.ns.svc:8080"}}, false, nil},
		{"bad and duplicate", []config.Member{
			{Address: "10.0.0.1:80"}, {Address: "10.0.0.1"}, {Address: "10.0.0.1:80", Weight: 1001},
		}, false, []wantErr{
			{"members[1].address", "is not host:port"},
			{"members[2].address", "10.0.0.1:80 is listed twice"},
			{"members[2].weight", "must be 1..1000"},
		}},
		{"the address rule", []config.Member{
			{Address: "10.0.0.1:80"}, {Address: "127.0.0.1:8081"}, {Address: "[::1]:80"}, {Address: "169.254.169.254:80"},
		}, false, []wantErr{
			{"members[1].address", `"127.0.0.1:8081": 127.0.0.1 is a loopback address, which a member of a members_from: api pool may not be`},
			{"members[2].address", `"[::1]:80": ::1 is a loopback address`},
			{"members[3].address", `"169.254.169.254:80": 169.254.169.254 is a link-local address`},
		}},
		{"the address rule with loopback allowed", []config.Member{
			{Address: "127.0.0.1:8081"}, {Address: "[::1]:80"}, {Address: "169.254.169.254:80"},
		}, true, []wantErr{
			{"members[2].address", `"169.254.169.254:80": 169.254.169.254 is a link-local address`},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkFieldErrors(t, config.ValidateMembers(tc.members, tc.loopback), tc.want)
		})
	}
}

func TestValidateName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"a", true}, {"A1", true}, {"0", true}, {"my-app_v1.2", true}, {long63, true},
		{"", false}, {long64, false}, {"-a", false}, {"_a", false}, {".a", false},
		{"a b", false}, {"a/b", false}, {"a\n", false}, {"é", false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q", tc.name), func(t *testing.T) {
			err := config.ValidateName(tc.name)
			if (err == nil) != tc.ok {
				t.Errorf("ValidateName(%q): got %v, want ok=%v", tc.name, err, tc.ok)
			}
		})
	}
}

func TestValidateDomain(t *testing.T) {
	tests := []struct {
		domain string
		phrase string // "" means valid
	}{
		{"example.com", ""},
		{"*.example.com", ""},
		{"a-b.example", ""},
		{"xn--bcher-kva.example", ""},
		{"localhost", ""},
		{"123.example", ""},
		{strings.Repeat("a", 63) + ".com", ""},
		{domain25, ""},
		{"*." + domain25, ""},
		{"**.example.com", ""},
		{"**.com", ""},
		{"**." + domain25, ""},
		{"**.", "is not a domain name"},
		{"**", "'*' may only be the whole left-most label"},
		{"***.example.com", "'*' may only be the whole left-most label"},
		{"**example.com", "'*' may only be the whole left-most label"},
		{"a.**.example.com", "'*' may only be the whole left-most label"},
		{"**.*.example.com", "'*' may only be the whole left-most label"},
		{"*.**.example.com", "'*' may only be the whole left-most label"},
		{"**.**.example.com", "'*' may only be the whole left-most label"},
		{"**." + domain26, "is not a domain name"},
		{"", "is not a domain name"},
		{"*", "'*' may only be the whole left-most label"},
		{"*.", "is not a domain name"},
		{"Example.com", "must be lower case"},
		{"example.COM", "must be lower case"},
		{"example.com:80", "must not hold a port"},
		{"a.*.com", "'*' may only be the whole left-most label"},
		{"*example.com", "'*' may only be the whole left-most label"},
		{"*.*.example.com", "'*' may only be the whole left-most label"},
		{"a..com", "labels are 1..63 characters"},
		{".example.com", "labels are 1..63 characters"},
		{"example.com.", "labels are 1..63 characters"},
		{label64, "labels are 1..63 characters"},
		{domain26, "is not a domain name"},
		{"-a.com", "character '-' is not allowed"},
		{"a-.com", "character '-' is not allowed"},
		{"a_b.com", "character '_' is not allowed"},
		{"exa mple.com", "character ' ' is not allowed"},
		{"bücher.example", "is not allowed"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%.40q", tc.domain), func(t *testing.T) {
			err := config.ValidateDomain(tc.domain)
			switch {
			case tc.phrase == "" && err != nil:
				t.Errorf("ValidateDomain(%q): got %v, want nil", tc.domain, err)
			case tc.phrase != "" && (err == nil || !strings.Contains(err.Error(), tc.phrase)):
				t.Errorf("ValidateDomain(%q): got %v, want an error with %q", tc.domain, err, tc.phrase)
			}
		})
	}
}

func TestValidateRoutePath(t *testing.T) {
	tests := []struct {
		path   string
		phrase string // "" means valid
	}{
		{"/", ""},
		{"/a", ""},
		{"/a/", ""},
		{"/a/b.c", ""},
		{"/a/..b/c.", ""},
		{"/.well-known/acme-challenge/", ""},
		{"/ünïcode/a b", ""},
		{"/100%", ""},
		{"/100%/x", ""},
		{"/ünïcode/%20", "must not hold percent-encoding (%20)"},
		{"/100%/group%2Fproject", "must not hold percent-encoding (%2F)"},
		{"/" + strings.Repeat("a", 4095), ""},
		{"", "must start with /"},
		{"a", "must start with /"},
		{"*", "must start with /"},
		{"//", "must not hold //"},
		{"/a//b", "must not hold //"},
		{"/.", "must not hold . or .. segments"},
		{"/./a", "must not hold . or .. segments"},
		{"/a/..", "must not hold . or .. segments"},
		{"/a/../b", "must not hold . or .. segments"},
		{"/a?b", "must not hold '?', '#' or control characters"},
		{"/a#b", "must not hold '?', '#' or control characters"},
		{"/a\x00", "must not hold '?', '#' or control characters"},
		{"/a\r\n", "must not hold '?', '#' or control characters"},
		{"/a\x7f", "must not hold '?', '#' or control characters"},
		{"/" + strings.Repeat("a", 4096), "must be at most 4096 bytes"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%.40q", tc.path), func(t *testing.T) {
			err := config.ValidateRoutePath(tc.path)
			switch {
			case tc.phrase == "" && err != nil:
				t.Errorf("ValidateRoutePath(%q): got %v, want nil", tc.path, err)
			case tc.phrase != "" && (err == nil || !strings.Contains(err.Error(), tc.phrase)):
				t.Errorf("ValidateRoutePath(%q): got %v, want an error with %q", tc.path, err, tc.phrase)
			}
		})
	}
}

func TestValidateHeaderNameAndValue(t *testing.T) {
	names := []struct {
		name string
		ok   bool
	}{
		{"X-Forwarded-For", true}, {"x_y", true}, {"!#$%&'*+-.^_`|~09azAZ", true},
		{"", false}, {"X Y", false}, {"X:Y", false}, {"X\n", false}, {"Ä", false}, {"(x)", false},
	}
	for _, tc := range names {
		t.Run(fmt.Sprintf("name %q", tc.name), func(t *testing.T) {
			if err := config.ValidateHeaderName(tc.name); (err == nil) != tc.ok {
				t.Errorf("ValidateHeaderName(%q): got %v, want ok=%v", tc.name, err, tc.ok)
			}
			if err := config.ValidateCookieName(tc.name); (err == nil) != tc.ok {
				t.Errorf("ValidateCookieName(%q): got %v, want ok=%v", tc.name, err, tc.ok)
			}
		})
	}
	values := []struct {
		value string
		ok    bool
	}{
		{"", true}, {"text/plain; charset=utf-8", true}, {"a\tb", true}, {"ünïcode", true}, {strings.Repeat("v", 4096), true},
		{"a\rb", false}, {"a\nb", false}, {"a\x00", false}, {"\x7f", false}, {"\x1b[31m", false}, {strings.Repeat("v", 4097), false},
	}
	for _, tc := range values {
		t.Run(fmt.Sprintf("value %.20q", tc.value), func(t *testing.T) {
			if err := config.ValidateHeaderValue(tc.value); (err == nil) != tc.ok {
				t.Errorf("ValidateHeaderValue(%q): got %v, want ok=%v", tc.value, err, tc.ok)
			}
		})
	}
}

func TestValidateMemberAddress(t *testing.T) {
	tests := []struct {
		addr   string
		phrase string // "" means valid
	}{
		{"10.0.0.1:80", ""},
		{"10.0.0.1:65535", ""},
		{"[::1]:8080", ""},
		{"[2001:db8::1]:1", ""},
		{"[::ffff:10.0.0.1]:80", ""},
		{"backend:80", ""},
		{"svc.ns.svc.cluster.local:8080", ""},
		{"Backend.Internal:443", ""}, // DNS names are case-insensitive
		{"", "is not host:port"},
		{"10.0.0.1", "is not host:port"},
		{"::1:80", "is not host:port"},
		{"10.0.0.1:80:90", "is not host:port"},
		{"10.0.0.1:0", "port must be 1..65535"},
		{"10.0.0.1:65536", "port must be 1..65535"},
		{"10.0.0.1:-1", "port must be 1..65535"},
		{"10.0.0.1:http", "port must be 1..65535"},
		{"10.0.0.1:", "port must be 1..65535"},
		{"[fe80::1%eth0]:80", "zoned addresses are not supported"},
		{":80", "host is neither an IP address nor a DNS name"},
		{"*.example.com:80", "host is neither an IP address nor a DNS name"},
		{"**.example.com:80", "host is neither an IP address nor a DNS name"},
		{"bad_host:80", "host is neither an IP address nor a DNS name"},
		{"host.:80", "host is neither an IP address nor a DNS name"},
		{"a b:80", "host is neither an IP address nor a DNS name"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q", tc.addr), func(t *testing.T) {
			err := config.ValidateMemberAddress(tc.addr)
			switch {
			case tc.phrase == "" && err != nil:
				t.Errorf("ValidateMemberAddress(%q): got %v, want nil", tc.addr, err)
			case tc.phrase != "" && (err == nil || !strings.Contains(err.Error(), tc.phrase)):
				t.Errorf("ValidateMemberAddress(%q): got %v, want an error with %q", tc.addr, err, tc.phrase)
			}
		})
	}
}

func TestParsePrefix(t *testing.T) {
	tests := []struct {
		name, in, want string // want "" means an error
	}{
		{"IPv4 address is a /32", "10.1.2.3", "10.1.2.3/32"},
		{"IPv6 address is a /128", "2001:db8::1", "2001:db8::1/128"},
		{"IPv4-mapped address is unmapped", "::ffff:10.1.2.3", "10.1.2.3/32"},
		{"IPv4 CIDR", "10.0.0.0/8", "10.0.0.0/8"},
		{"IPv4 CIDR is masked", "10.1.2.3/8", "10.0.0.0/8"},
		{"IPv6 CIDR is masked", "2001:db8:1:2::5/32", "2001:db8::/32"},
		{"IPv4 /0", "0.0.0.0/0", "0.0.0.0/0"},
		{"IPv6 /0", "::/0", "::/0"},
		{"host CIDR", "192.168.1.7/32", "192.168.1.7/32"},
		// Peers are unmapped before they are compared with the trusted
		// prefixes (daemon/serve.go), so a mapped prefix must be too.
		{"IPv4-mapped CIDR is unmapped", "::ffff:10.0.0.0/104", "10.0.0.0/8"},
		{"prefix length too long", "10.0.0.0/33", ""},
		{"IPv6 prefix length too long", "::/129", ""},
		{"no prefix length", "10.0.0.0/", ""},
		{"not an address", "proxy.local", ""},
		{"empty", "", ""},
		{"five octets", "1.2.3.4.5", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := config.ParsePrefix(tc.in)
			if tc.want == "" {
				if err == nil {
					t.Errorf("ParsePrefix(%q): got %v, want an error", tc.in, got)
				}
				return
			}
			want := netip.MustParsePrefix(tc.want)
			if err != nil || got != want {
				t.Errorf("ParsePrefix(%q): got %v, %v; want %v, nil", tc.in, got, err, want)
			}
		})
	}
}
