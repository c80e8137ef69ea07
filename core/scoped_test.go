package core

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// gateway makes a contribution that adds one listener.
func gateway(name string, minutes int, listener, address string) *Contribution {
	c := ing("gw", name, minutes)
	c.Origin.Kind = "Gateway"
	c.Listeners = []Listener{{Name: listener, Address: address}}
	return c
}

// route makes an HTTPRoute-shaped contribution with one scoped host whose
// routes have the given orders and prefixes, each to Service svc.
func route(name string, minutes int, listener, host string, routes ...ScopedRoute) *Contribution {
	c := ing("ns", name, minutes)
	c.Origin.Kind = "HTTPRoute"
	c.Scoped = []ScopedHost{{Listener: listener, Host: host, Routes: routes}}
	return c
}

func to(order int, match config.PathMatch, svc string) ScopedRoute {
	return ScopedRoute{Order: order, Match: config.Match{Path: match}, Backends: []WeightedBackend{{Backend: backendOf(svc), Weight: 1}}}
}

func backendOf(svc string) *Backend {
	return &Backend{Namespace: "ns", Service: svc, Port: "80", Members: []config.Member{{Address: "10.0.0.1:80"}}}
}

// scopedLines lists "app [listeners] path -> action" for every route, in
// rendering order per application, applications sorted.
func scopedLines(r *Result) []string {
	var lines []string
	apps := r.Config.Tenants[TenantName].Applications
	for _, name := range sortedKeys(apps) {
		app := apps[name]
		for _, rt := range app.Routes {
			lines = append(lines, fmt.Sprintf("%s %v %s%s%s -> %s", name, app.Listeners, rt.Match.Path.Exact, rt.Match.Path.Prefix, rt.Match.Path.Regex, weighted(rt.Action)))
		}
		if app.DefaultRoute != nil {
			lines = append(lines, fmt.Sprintf("%s %v default -> %s", name, app.Listeners, weighted(app.DefaultRoute.Action)))
		}
	}
	return lines
}

func weighted(a config.Action) string {
	if len(a.Pools) == 0 {
		return action(a)
	}
	var parts []string
	for _, p := range a.Pools {
		choice := p.Pool
		if p.Status != 0 {
			choice = fmt.Sprint(p.Status)
		}
		parts = append(parts, fmt.Sprintf("%s*%d", choice, p.Weight))
	}
	return strings.Join(parts, ",")
}

func TestScoped(t *testing.T) {
	tests := []struct {
		name     string
		cs       []*Contribution
		want     []string
		findings []string
		domains  map[string][]string // application → domains; nil: not checked
	}{{
		name: "routes of two objects in the input's order, the Ingress kept to the base's listeners",
		cs: []*Contribution{
			ing("ns", "shop", 0).rule("shop.example.com", prefix("/", "web")),
			gateway("gw", 1, "gw1", ":10000"),
			route("a", 2, "gw1", "shop.example.com", to(2, config.PathMatch{Prefix: "/"}, "a")),
			route("b", 3, "gw1", "shop.example.com", to(1, config.PathMatch{Exact: "/b"}, "b")),
		},
		want: []string{
			"h_shop_example_com [http] / -> p_ns_web_80",
			"s_gw1_shop_example_com [gw1] /b -> p_ns_b_80",
			"s_gw1_shop_example_com [gw1] / -> p_ns_a_80",
			"s_gw1_shop_example_com [gw1] default -> 404",
		},
	}, {
		name: "a regex route turns the table's other paths into case-sensitive regexes, in order",
		cs: []*Contribution{
			gateway("gw", 1, "gw1", ":10000"),
			route("a", 2, "gw1", "",
				to(1, config.PathMatch{Exact: "/x.y"}, "a"),
				to(2, config.PathMatch{Regex: "/r[0-9]+"}, "b"),
				to(3, config.PathMatch{Prefix: "/p/"}, "c"),
				to(4, config.PathMatch{Prefix: "/"}, "d")),
		},
		want: []string{
			`s_gw1_default [gw1] (?-i:/x\.y)$ -> p_ns_a_80`,
			`s_gw1_default [gw1] /r[0-9]+ -> p_ns_b_80`,
			`s_gw1_default [gw1] (?-i:/p)(?:/|$) -> p_ns_c_80`,
			`s_gw1_default [gw1] / -> p_ns_d_80`,
			`s_gw1_default [gw1] default -> 404`,
		},
	}, {
		name: "weighted backends and a share that answers 500",
		cs: []*Contribution{
			gateway("gw", 1, "gw1", ":10000"),
			route("a", 2, "gw1", "x.example.com", ScopedRoute{Order: 1, Match: config.Match{Path: config.PathMatch{Prefix: "/"}},
				Backends: []WeightedBackend{{Backend: backendOf("a"), Weight: 3}, {Weight: 1, Status: 500}}}),
		},
		want: []string{
			"s_gw1_x_example_com [gw1] / -> p_ns_a_80*3,500*1",
			"s_gw1_x_example_com [gw1] default -> 404",
		},
	}, {
		name: "on a shared listener the older Ingress keeps its host",
		cs: []*Contribution{
			ing("ns", "shop", 0).rule("shop.example.com", prefix("/", "web")),
			route("a", 2, "http", "shop.example.com", to(1, config.PathMatch{Prefix: "/"}, "a")),
			route("c", 3, "http", "other.example.com", to(1, config.PathMatch{Prefix: "/"}, "c")),
		},
		want: []string{
			"h_shop_example_com [] / -> p_ns_web_80",
			"s_http_other_example_com [http] / -> p_ns_c_80",
			"s_http_other_example_com [http] default -> 404",
		},
		findings: []string{`ns/a PathConflict: host "shop.example.com" of listener "http" is served by Ingress ns/shop, whose claim is older; an Ingress and a Gateway API route never serve one host together, so this object's rules for it are not served`},
	}, {
		name: "on a shared listener the older route takes the host from the Ingress",
		cs: []*Contribution{
			route("a", 0, "http", "shop.example.com", to(1, config.PathMatch{Prefix: "/"}, "a")),
			ing("ns", "shop", 2).rule("shop.example.com", prefix("/", "web")).rule("www.example.com", prefix("/", "web")),
		},
		want: []string{
			"h_www_example_com [] / -> p_ns_web_80",
			"s_http_shop_example_com [http] / -> p_ns_a_80",
			"s_http_shop_example_com [http] default -> 404",
		},
		findings: []string{`ns/shop PathConflict: host "shop.example.com" is served by HTTPRoute ns/a, whose claim is older; an Ingress and a Gateway API route never serve one host together, so this object's rules for it are not served`},
	}, {
		name: "a wildcard host matches one or more labels (**.), an Ingress wildcard one",
		cs: []*Contribution{
			ing("ns", "shop", 0).rule("*.example.com", prefix("/", "web")),
			gateway("gw", 1, "gw1", ":10000"),
			route("a", 2, "gw1", "*.example.com", to(1, config.PathMatch{Prefix: "/"}, "a")),
			route("b", 3, "gw1", "example.com", to(1, config.PathMatch{Prefix: "/"}, "b")),
			route("c", 4, "gw1", "", to(1, config.PathMatch{Prefix: "/"}, "c")),
		},
		want: []string{
			"h__example_com [http] / -> p_ns_web_80",
			"s_gw1__example_com [gw1] / -> p_ns_a_80",
			"s_gw1__example_com [gw1] default -> 404",
			"s_gw1_default [gw1] / -> p_ns_c_80",
			"s_gw1_default [gw1] default -> 404",
			"s_gw1_example_com [gw1] / -> p_ns_b_80",
			"s_gw1_example_com [gw1] default -> 404",
		},
		domains: map[string][]string{
			"h__example_com":     {"*.example.com"},
			"s_gw1__example_com": {"**.example.com"},
			"s_gw1_example_com":  {"example.com"},
			"s_gw1_default":      {"*"},
		},
	}, {
		name: "a listener that cannot be added is left out, and so are the routes on it",
		cs: []*Contribution{
			gateway("gw", 1, "gw1", "not an address"),
			route("a", 2, "gw1", "x.example.com", to(1, config.PathMatch{Prefix: "/"}, "a")),
		},
		want: nil,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := build(t, Options{}, tt.cs...)
			if got := scopedLines(r); !slices.Equal(got, tt.want) {
				t.Errorf("served:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			var conflicts []string
			for _, f := range findings(r) {
				if strings.Contains(f, "PathConflict") {
					conflicts = append(conflicts, f)
				}
			}
			if !slices.Equal(conflicts, tt.findings) {
				t.Errorf("conflict findings:\n%s\nwant:\n%s", strings.Join(conflicts, "\n"), strings.Join(tt.findings, "\n"))
			}
			for app, want := range tt.domains {
				if got := r.Config.Tenants[TenantName].Applications[app]; got == nil || !slices.Equal(got.Domains, want) {
					t.Errorf("application %s: got %+v, want domains %q", app, got, want)
				}
			}
		})
	}
}

func TestScopedLeftOutListenerIsReported(t *testing.T) {
	r := build(t, Options{}, gateway("gw", 1, "gw1", "not an address"),
		route("a", 2, "gw1", "x.example.com", to(1, config.PathMatch{Prefix: "/"}, "a")))
	for _, o := range []string{"Gateway gw/gw", "HTTPRoute ns/a"} {
		found := slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Object.String() == o && f.Reason == InvalidConfiguration })
		if !found {
			t.Errorf("no InvalidConfiguration finding for %s in %v", o, findings(r))
		}
	}
	if r.Config.Server.Listeners["gw1"] != nil {
		t.Errorf("the listener with a bad address was added: %+v", r.Config.Server.Listeners["gw1"])
	}
}

func TestScopedLostHostNamesItsScope(t *testing.T) {
	r := build(t, Options{}, ing("ns", "shop", 0).rule("shop.example.com", prefix("/", "web")),
		route("a", 2, "http", "shop.example.com", to(1, config.PathMatch{Prefix: "/"}, "a")))
	want := Scope{Listener: "http", Host: "shop.example.com"}
	for _, f := range r.Findings {
		if f.Object.Kind == "HTTPRoute" && f.Reason == PathConflict {
			if f.Scope != want {
				t.Errorf("scope = %+v, want %+v", f.Scope, want)
			}
			return
		}
	}
	t.Errorf("no PathConflict finding for the route in %v", findings(r))
}

func TestScopedDomain(t *testing.T) {
	tests := []struct{ host, domain string }{
		{"", "*"},
		{"shop.example.com", "shop.example.com"},
		{"*.example.com", "**.example.com"},
	}
	for _, tc := range tests {
		t.Run(tc.host, func(t *testing.T) {
			if got := scopedDomain(tc.host); got != tc.domain {
				t.Errorf("scopedDomain(%q) = %q, want %q", tc.host, got, tc.domain)
			}
			if got := inputHost(tc.domain); got != tc.host {
				t.Errorf("inputHost(%q) = %q, want %q", tc.domain, got, tc.host)
			}
		})
	}
}

// TestScopedCertificateNotCovering: a scoped host's certificate that does
// not cover the host (the Gateway API allows it) is not the application's,
// which ramjetd would refuse: the listener's default certificate serves.
func TestScopedCertificateNotCovering(t *testing.T) {
	gw := gateway("gw", 0, "gw", "127.0.0.1:0")
	gw.Listeners[0].TLS = true
	covering, other := scopedCert(t, "*.test.com"), scopedCert(t, "*.org")
	a := route("a", 1, "gw", "secure.test.com", to(1, config.PathMatch{Prefix: "/"}, "a"))
	a.Scoped[0].Cert = covering
	b := route("b", 2, "gw", "other.test.com", to(1, config.PathMatch{Prefix: "/"}, "b"))
	b.Scoped[0].Cert = other
	r := build(t, Options{}, gw, a, b)
	apps := r.Config.Tenants[TenantName].Applications
	if app := apps[ScopedAppName("gw", "secure.test.com")]; app == nil || app.TLS == nil {
		t.Errorf("the host with a covering certificate has no certificate of its own: %+v", app)
	}
	if app := apps[ScopedAppName("gw", "other.test.com")]; app == nil || app.TLS != nil {
		t.Errorf("the host with a certificate for *.org got it as its own: %+v", app)
	}
}

// scopedCert is a self-signed certificate for the DNS name.
func scopedCert(t *testing.T, name string) *Certificate {
	t.Helper()
	return multiCert(t, name)
}

// multiCert is a self-signed certificate for the DNS names.
func multiCert(t *testing.T, names ...string) *Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	parsed, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &Certificate{CertPEM: certPEM, KeyPEM: keyPEM, Parsed: &parsed}
}
