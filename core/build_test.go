package core

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// ing makes a contribution of namespace/name created minutes after t0.
func ing(ns, name string, minutes int) *Contribution {
	return &Contribution{Origin: Origin{Kind: "Ingress", Namespace: ns, Name: name, Created: t0.Add(time.Duration(minutes) * time.Minute)}}
}

func (c *Contribution) rule(host string, paths ...Path) *Contribution {
	c.Rules = append(c.Rules, Rule{Host: host, Paths: paths})
	return c
}

func prefix(p, svc string) Path {
	return Path{Path: p, Type: PathPrefix, Backend: &Backend{Namespace: "ns", Service: svc, Port: "80", Members: []config.Member{{Address: "10.0.0.1:80"}}}}
}

func exact(p, svc string) Path {
	pp := prefix(p, svc)
	pp.Type = PathExact
	return pp
}

var testBase = &config.Server{Listeners: map[string]*config.Listener{"http": {Address: ":80"}}}

func build(t *testing.T, opts Options, cs ...*Contribution) *Result {
	t.Helper()
	r := Build(cs, testBase, opts)
	if err := r.Config.Validate(); err != nil {
		t.Fatalf("Build produced an invalid configuration: %v", err)
	}
	return r
}

// served lists "app route -> action" lines of a result, sorted.
func served(r *Result) []string {
	var lines []string
	for name, app := range r.Config.Tenants[TenantName].Applications {
		for _, rt := range app.Routes {
			lines = append(lines, fmt.Sprintf("%s %s%s%s -> %s", name, rt.Match.Path.Exact, rt.Match.Path.Prefix, rt.Match.Path.Regex, action(rt.Action)))
		}
		if app.DefaultRoute != nil {
			lines = append(lines, fmt.Sprintf("%s default -> %s", name, action(app.DefaultRoute.Action)))
		}
	}
	slices.Sort(lines)
	return lines
}

func action(a config.Action) string {
	switch {
	case a.Pool != "":
		return a.Pool
	case a.Respond != nil:
		return fmt.Sprint(a.Respond.Status)
	case a.Redirect != nil:
		return "redirect " + a.Redirect.URL
	}
	return "?"
}

func findings(r *Result) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, fmt.Sprintf("%s/%s %s: %s", f.Object.Namespace, f.Object.Name, f.Reason, f.Message))
	}
	return out
}

func wantFinding(t *testing.T, r *Result, who string, reason Reason, phrase string) {
	t.Helper()
	for _, f := range r.Findings {
		if f.Object.Namespace+"/"+f.Object.Name == who && f.Reason == reason && strings.Contains(f.Message, phrase) {
			return
		}
	}
	t.Errorf("no %s finding for %s containing %q; findings:\n%s", reason, who, phrase, strings.Join(findings(r), "\n"))
}

func wantServed(t *testing.T, r *Result, want ...string) {
	t.Helper()
	if got := served(r); !slices.Equal(got, want) {
		t.Errorf("served:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestNamespaceOwnsHost(t *testing.T) {
	a := ing("a", "first", 0).rule("x.test", prefix("/a", "one"))
	b := ing("b", "second", 1).rule("x.test", prefix("/b", "two")).rule("y.test", prefix("/", "two"))
	r := build(t, Options{}, a, b)
	wantServed(t, r, "h_x_test /a -> p_ns_one_80", "h_y_test / -> p_ns_two_80")
	wantFinding(t, r, "b/second", PathConflict, `host "x.test" belongs to namespace a`)

	r = build(t, Options{CrossNamespacePaths: true}, a, b)
	wantServed(t, r, "h_x_test /a -> p_ns_one_80", "h_x_test /b -> p_ns_two_80", "h_y_test / -> p_ns_two_80")
}

func TestOldestWinsPath(t *testing.T) {
	old := ing("a", "old", 0).rule("x.test", prefix("/a", "one"))
	newer := ing("a", "new", 1).rule("x.test", prefix("/a/", "two"), exact("/a", "two"))
	r := build(t, Options{}, newer, old)
	wantServed(t, r, "h_x_test /a -> p_ns_one_80", "h_x_test /a -> p_ns_two_80")
	wantFinding(t, r, "a/new", PathConflict, "already held by Ingress a/old")
	// Ties on creation time break on namespace/name ascending.
	tie := ing("a", "aaa", 0).rule("x.test", prefix("/a", "two"))
	r = build(t, Options{}, old, tie)
	wantFinding(t, r, "a/old", PathConflict, "already held by Ingress a/aaa")
}

func TestRefusedKeepsItsPaths(t *testing.T) {
	refused := ing("a", "protected", 0).rule("x.test", prefix("/admin", "one"))
	refused.Refused = true
	newer := ing("a", "open", 1).rule("x.test", prefix("/admin", "two"), prefix("/", "two"))
	r := build(t, Options{}, refused, newer)
	wantServed(t, r, "h_x_test / -> p_ns_two_80", "h_x_test /admin -> 404")
	wantFinding(t, r, "a/open", PathConflict, "not served, so the path answers 404")
	if r.Objects[refused.Origin] != Rejected || r.Objects[newer.Origin] != Served {
		t.Errorf("states %v", r.Objects)
	}
	// A refused object also keeps its host from other namespaces.
	other := ing("b", "other", 2).rule("x.test", prefix("/b", "three"))
	r = build(t, Options{}, refused, other)
	wantFinding(t, r, "b/other", PathConflict, "belongs to namespace a")
}

func TestWildcardOwnerKeepsHostsUnderIt(t *testing.T) {
	wild := ing("a", "wild", 0).rule("*.example.com", prefix("/", "one"))
	shop := ing("b", "shop", 1).rule("shop.example.com", prefix("/", "two"))
	same := ing("a", "api", 2).rule("api.example.com", prefix("/", "three"))
	r := build(t, Options{}, wild, shop, same)
	wantServed(t, r, "h__example_com / -> p_ns_one_80", "h_api_example_com / -> p_ns_three_80")
	wantFinding(t, r, "b/shop", PathConflict, `falls under "*.example.com", which belongs to namespace a`)
	// An exact host older than the wildcard keeps its own namespace.
	olderShop := ing("b", "shop", -1).rule("shop.example.com", prefix("/", "two"))
	r = build(t, Options{}, wild, olderShop)
	wantServed(t, r, "h__example_com / -> p_ns_one_80", "h_shop_example_com / -> p_ns_two_80")
	// crossNamespacePaths lifts the rule among Ingresses.
	r = build(t, Options{CrossNamespacePaths: true}, wild, shop)
	wantServed(t, r, "h__example_com / -> p_ns_one_80", "h_shop_example_com / -> p_ns_two_80")
}

func TestRegexMode(t *testing.T) {
	api := ing("a", "api", 1).rule("x.test", prefix("/api(/|$)(.*)", "api"))
	api.Settings.Regex = true
	api.Settings.Policies.Rewrite = &config.Rewrite{Path: "/$2"}
	front := ing("a", "front", 0).rule("x.test", prefix("/", "web"), exact("/exact", "web"), prefix("/a.b", "web"))
	// matches lists the host's routes in order, with their kind.
	matches := func(r *Result) []string {
		var out []string
		for _, rt := range r.Config.Tenants[TenantName].Applications["h_x_test"].Routes {
			p := rt.Match.Path
			switch {
			case p.Exact != "":
				out = append(out, "exact "+p.Exact)
			case p.Prefix != "":
				out = append(out, "prefix "+p.Prefix)
			default:
				out = append(out, "regex "+p.Regex)
			}
		}
		return out
	}
	r := build(t, Options{}, api, front)
	// Every path of the host is a regex, Exact included (ingress-nginx's
	// ~* "^<path>"), the front's escaped, longest path first.
	if got, want := matches(r), []string{`regex /api(/|$)(.*)`, "regex /exact", `regex /a\.b`, "regex /"}; !slices.Equal(got, want) {
		t.Errorf("routes %q, want %q", got, want)
	}
	// An Exact path of the object asking for regexes is its regex (the
	// submatches feed the rewrite), tried first as the longest.
	register := ing("a", "register", 1).rule("x.test", exact("/api/user/register(/|$)(.*)", "api"))
	register.Settings.Regex = true
	register.Settings.Policies.Rewrite = &config.Rewrite{Path: "/$2"}
	r = build(t, Options{}, register, front)
	if got, want := matches(r), []string{`regex /api/user/register(/|$)(.*)`, "regex /exact", `regex /a\.b`, "regex /"}; !slices.Equal(got, want) {
		t.Errorf("routes %q, want %q", got, want)
	}
	if len(r.Findings) != 0 {
		t.Errorf("findings %v, want none", r.Findings)
	}
	// Without regex mode, Exact stays exact.
	if got, want := matches(build(t, Options{}, front)), []string{"prefix /", "prefix /a.b", "exact /exact"}; !slices.Equal(got, want) {
		t.Errorf("routes %q, want %q", got, want)
	}
	// A regex object of another namespace does not switch the host.
	other := ing("b", "other", 2).rule("x.test", prefix("/re/.*", "o"))
	other.Settings.Regex = true
	front2 := ing("a", "front", 0).rule("x.test", prefix("/", "web"))
	r = build(t, Options{CrossNamespacePaths: true}, front2, other)
	wantServed(t, r, "h_x_test / -> p_ns_web_80", "h_x_test /re/.* -> p_ns_o_80")
	if app := r.Config.Tenants[TenantName].Applications["h_x_test"]; app.Routes[0].Match.Path.Prefix != "/" {
		t.Errorf("the owner's prefix route became %+v", app.Routes[0].Match.Path)
	}
}

func TestDefaultBackend(t *testing.T) {
	old := ing("a", "old", 0)
	old.DefaultBackend = &Backend{Namespace: "a", Service: "fallback", Port: "80"}
	newer := ing("a", "new", 1)
	newer.DefaultBackend = &Backend{Namespace: "a", Service: "other", Port: "80"}
	r := build(t, Options{}, newer, old)
	wantServed(t, r, "default default -> p_a_fallback_80")
	wantFinding(t, r, "a/new", PathConflict, "already set by Ingress a/old")

	old.Settings.Protected = true
	r = build(t, Options{}, newer, old)
	wantServed(t, r, "default default -> 404")
	wantFinding(t, r, "a/old", InvalidAnnotation, "access control")

	// The flag's default backend answers unknown hosts.
	r = build(t, Options{DefaultBackend: &Backend{Namespace: "kube-system", Service: "nf", Port: "8080"}})
	if d := r.Config.Tenants[TenantName].DefaultRoute; d == nil || d.Action.Pool != "p_kube-system_nf_8080" {
		t.Errorf("tenant default %+v", d)
	}
	if app := r.Config.Tenants[TenantName].Applications[CatchAllApp]; app == nil || app.Domains[0] != "*" {
		t.Errorf("no catch-all application for the flag's default backend: %+v", app)
	}
}

func TestIsolation(t *testing.T) {
	good := ing("a", "good", 0).rule("x.test", prefix("/", "web"))
	bad := ing("a", "bad", 1).rule("x.test", prefix("/api/(", "api"), prefix("/ok", "api"))
	bad.Settings.Regex = true
	r := build(t, Options{}, good, bad)
	wantFinding(t, r, "a/bad", InvalidConfiguration, "left out because it makes the configuration invalid")
	if r.Objects[bad.Origin] != Rejected || r.Objects[good.Origin] != Served {
		t.Errorf("states %v", r.Objects)
	}
	// The object keeps its valid paths, which answer 404; the host stays
	// in regex mode only if a served owner asks for it.
	wantServed(t, r, "h_x_test / -> p_ns_web_80", "h_x_test /ok -> 404")
	if bad.Refused {
		t.Error("Build changed its input")
	}
}

func TestGeneratedNames(t *testing.T) {
	cases := []struct{ host, want string }{
		{"www.example.com", "h_www_example_com"},
		{"*.example.com", "h__example_com"},
		{"", "default"},
		{strings.Repeat("a", 70) + ".test", "h_" + strings.Repeat("a", 52) + "_"},
	}
	for _, tc := range cases {
		got := AppName(tc.host)
		if !strings.HasPrefix(got, tc.want) || len(got) > 63 {
			t.Errorf("AppName(%q) = %q, want %q…, at most 63", tc.host, got, tc.want)
		}
	}
	if got := PoolName("ns", "svc", "http", PoolSettings{}); got != "p_ns_svc_http" {
		t.Errorf("PoolName = %q", got)
	}
	a := PoolName("ns", "svc", "80", PoolSettings{Balance: config.BalanceLeastConn})
	b := PoolName("ns", "svc", "80", PoolSettings{Balance: config.BalanceHash, Hash: &config.Hash{By: config.HashByClientIP}})
	if a == b || !strings.HasPrefix(a, "p_ns_svc_80_") || len(a) != len("p_ns_svc_80_")+6 {
		t.Errorf("pools with other settings: %q and %q", a, b)
	}
	long := strings.Repeat("x", 63)
	if n1, n2 := PoolName(long, "a", "80", PoolSettings{}), PoolName(long, "b", "80", PoolSettings{}); n1 == n2 || len(n1) != 63 {
		t.Errorf("long names %q %q", n1, n2)
	}
}
