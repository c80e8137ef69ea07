package core

import (
	"slices"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// domainLines lists "app: domains [tls] [-> redirect host]" for every
// application, sorted.
func domainLines(r *Result) []string {
	var lines []string
	for name, app := range r.Config.Tenants[TenantName].Applications {
		line := name + ": " + strings.Join(app.Domains, ",")
		if app.TLS != nil {
			line += " tls"
		}
		if app.ClientAuth != nil {
			line += " client-auth"
		}
		if d := app.DefaultRoute; d != nil && d.Action.Redirect != nil {
			line += " -> " + d.Action.Redirect.Hostname
		}
		lines = append(lines, line)
	}
	slices.Sort(lines)
	return lines
}

func withAliases(c *Contribution, aliases ...string) *Contribution {
	c.Settings.Aliases = aliases
	return c
}

func withWWW(c *Contribution) *Contribution {
	c.Settings.WWWRedirect = true
	return c
}

func canaryOf(c *Contribution) *Contribution {
	c.Settings.Canary = &Canary{Weight: 10, Total: 100}
	return c
}

func withTLS(c *Contribution, host string, cert *Certificate) *Contribution {
	c.TLS = append(c.TLS, TLS{Hosts: []string{host}, Secret: "s", Cert: cert})
	return c
}

func TestHostNames(t *testing.T) {
	shopCert := scopedCert(t, "shop.example.com")
	apexCert := scopedCert(t, "example.com")
	clientAuth := func(c *Contribution) *Contribution {
		c.Settings.ClientAuth = &ClientAuth{CA: []byte("ca"), Verify: config.VerifyOn, Depth: 1}
		c.Settings.Protected = true
		return c
	}
	refused := func(c *Contribution) *Contribution { c.Refused = true; return c }
	tests := []struct {
		name string
		cs   []*Contribution
		want []string
		// findings are substrings of the expected findings, in any order.
		findings []string
	}{
		{name: "exact and wildcard aliases without TLS: domains of the host",
			cs:   []*Contribution{withAliases(ing("a", "shop", 1).rule("shop.example.com", prefix("/", "web")), "*.shop.example.org", "shop.example.org")},
			want: []string{"h_shop_example_com: shop.example.com,**.shop.example.org,shop.example.org"}},
		{name: "uncovered alias: a copy with the default certificate",
			cs:       []*Contribution{withTLS(withAliases(ing("a", "shop", 1).rule("shop.example.com", prefix("/", "web")), "store.example.com"), "shop.example.com", shopCert)},
			want:     []string{"a_shop_example_com: store.example.com", "h_shop_example_com: shop.example.com tls"},
			findings: []string{`server-alias "store.example.com": the certificate of host "shop.example.com" does not cover it`}},
		{name: "uncovered alias of a host with client certificates: not served",
			cs:       []*Contribution{clientAuth(withTLS(withAliases(ing("a", "shop", 1).rule("shop.example.com", prefix("/", "web")), "store.example.com"), "shop.example.com", shopCert))},
			want:     []string{"h_shop_example_com: shop.example.com tls client-auth"},
			findings: []string{`server-alias "store.example.com" of host "shop.example.com" is not served: the host asks for client certificates`}},
		{name: "a refused object's aliases are not used; the next owning object's are",
			cs: []*Contribution{
				withAliases(refused(ing("a", "old", 1).rule("shop.example.com", prefix("/", "web"))), "old.example.com"),
				withAliases(ing("a", "new", 2).rule("shop.example.com", prefix("/new", "web")), "new.example.com"),
			},
			want: []string{"h_shop_example_com: shop.example.com,new.example.com"}},
		{name: "an alias a Gateway API route holds on a shared listener is skipped",
			cs: []*Contribution{
				withAliases(ing("a", "shop", 2).rule("shop.example.com", prefix("/", "web")), "gw.example.com"),
				route("r", 1, "http", "gw.example.com", to(0, config.PathMatch{Prefix: "/"}, "gw")),
			},
			want:     []string{"h_shop_example_com: shop.example.com", "s_http_gw_example_com: gw.example.com"},
			findings: []string{`server-alias "gw.example.com" of host "shop.example.com" is not served: it is a host of a Gateway API route`}},
		{name: "two hosts ask for one alias: the older host gets it",
			cs: []*Contribution{
				withAliases(ing("a", "b", 2).rule("b.example.com", prefix("/", "web")), "x.example.com"),
				withAliases(ing("a", "a", 1).rule("a.example.com", prefix("/", "web")), "x.example.com"),
			},
			want:     []string{"h_a_example_com: a.example.com,x.example.com", "h_b_example_com: b.example.com"},
			findings: []string{`server-alias "x.example.com" of host "b.example.com" is not served: it is an alias of host "a.example.com"`}},
		{name: "a canary's aliases and www redirect are not used",
			cs: []*Contribution{
				ing("a", "main", 1).rule("shop.example.com", prefix("/", "web")),
				canaryOf(withWWW(withAliases(ing("a", "canary", 2).rule("shop.example.com", prefix("/", "web2")), "x.example.com"))),
			},
			want:     []string{"h_shop_example_com: shop.example.com"},
			findings: []string{"the canary's annotations other than canary-*"}},
		{name: "catch-all: aliases and www redirect ignored",
			cs:   []*Contribution{withWWW(withAliases(ing("a", "any", 1).rule("", prefix("/", "web")), "x.example.com"))},
			want: []string{"default: *"},
			findings: []string{"server-alias is ignored for the catch-all host",
				"from-to-www-redirect is ignored for the catch-all host"}},
		{name: "www twin with the host's certificate when it covers it",
			cs:       []*Contribution{withWWW(withTLS(ing("a", "apex", 1).rule("www.example.com", prefix("/", "web")), "www.example.com", scopedCert(t, "*.example.com")))},
			want:     []string{"h_www_example_com: www.example.com tls", "w_example_com: example.com -> www.example.com"},
			findings: []string{`from-to-www-redirect from "example.com": the certificate of host "www.example.com" does not cover it`}},
		{name: "www twin covered",
			cs:   []*Contribution{withWWW(withTLS(ing("a", "apex", 1).rule("example.com", prefix("/", "web")), "example.com", multiCert(t, "example.com", "www.example.com")))},
			want: []string{"h_example_com: example.com tls", "w_www_example_com: www.example.com tls -> example.com"}},
		{name: "www twin not covered",
			cs:       []*Contribution{withWWW(withTLS(ing("a", "apex", 1).rule("example.com", prefix("/", "web")), "example.com", apexCert))},
			want:     []string{"h_example_com: example.com tls", "w_www_example_com: www.example.com -> example.com"},
			findings: []string{`from-to-www-redirect from "www.example.com": the certificate of host "example.com" does not cover it`}},
		{name: "www twin taken by an alias of the host itself",
			cs:       []*Contribution{withWWW(withAliases(ing("a", "apex", 1).rule("example.com", prefix("/", "web")), "www.example.com"))},
			want:     []string{"h_example_com: example.com,www.example.com"},
			findings: []string{`"www.example.com" is not redirected: it is an alias of host "example.com"`}},
		{name: "www twin too long to be a domain",
			cs:       []*Contribution{withWWW(ing("a", "long", 1).rule(longHost(251), prefix("/", "web")))},
			want:     []string{AppName(longHost(251)) + ": " + longHost(251)},
			findings: []string{"is not a domain name"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := build(t, Options{}, tc.cs...)
			if got := domainLines(r); !slices.Equal(got, tc.want) {
				t.Errorf("applications:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			var messages []string
			for _, f := range r.Findings {
				messages = append(messages, f.Message)
			}
			for _, want := range tc.findings {
				if !slices.ContainsFunc(messages, func(m string) bool { return strings.Contains(m, want) }) {
					t.Errorf("no finding contains %q; findings:\n%s", want, strings.Join(messages, "\n"))
				}
			}
			if len(messages) != len(tc.findings) {
				t.Errorf("%d findings, want %d:\n%s", len(messages), len(tc.findings), strings.Join(messages, "\n"))
			}
		})
	}
}

// longHost is a host name of n characters (labels of up to 63).
func longHost(n int) string {
	var labels []string
	for n > 0 {
		l := min(n, 63)
		if n-l == 1 {
			l-- // no label of length 0 after the dot
		}
		labels = append(labels, strings.Repeat("a", l))
		n -= l + 1
	}
	return strings.Join(labels, ".")
}

func TestWWWTwin(t *testing.T) {
	for host, want := range map[string]string{
		"example.com": "www.example.com", "www.example.com": "example.com",
		"shop.example.com": "www.shop.example.com", "www2.example.com": "www.www2.example.com",
	} {
		if got := wwwTwin(host); got != want {
			t.Errorf("wwwTwin(%q) = %q, want %q", host, got, want)
		}
	}
}

func TestGeneratedNamesOfHostNames(t *testing.T) {
	tests := []struct{ got, want string }{
		{AliasAppName("shop.example.com"), "a_shop_example_com"},
		{AliasAppName("*.example.com"), "a__example_com"},
		{RedirectAppName("www.example.com"), "w_www_example_com"},
		{RedirectAppName("example.com"), "w_example_com"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	long := longHost(200)
	if n := AliasAppName(long); len(n) > config.MaxNameLength || !strings.HasPrefix(n, "a_") {
		t.Errorf("AliasAppName of a long host = %q, want a_… of at most %d characters", n, config.MaxNameLength)
	}
}
