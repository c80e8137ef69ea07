package router

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

func prefix(p, v string) Route[string] {
	return Route[string]{Match: config.Match{Path: config.PathMatch{Prefix: p}}, Value: v}
}

func exact(p, v string) Route[string] {
	return Route[string]{Match: config.Match{Path: config.PathMatch{Exact: p}}, Value: v}
}

func regex(p, v string) Route[string] {
	return Route[string]{Match: config.Match{Path: config.PathMatch{Regex: p}}, Value: v}
}

func regexWithCaptures(p, v string) Route[string] {
	r := regex(p, v)
	r.Captures = true
	return r
}

func mustBuild(t testing.TB, sites ...Site[string]) *Table[string] {
	t.Helper()
	table, err := Build(sites, 0)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return table
}

func lookup(table *Table[string], host, path string) string {
	v, _, err := table.Lookup(host, path, nil)
	if err != nil {
		return "404"
	}
	return v
}

// TestKubernetesPathTable is the table of the Kubernetes Ingress
// documentation ("Examples" under "Path types").
func TestKubernetesPathTable(t *testing.T) {
	cases := []struct {
		name   string
		routes []Route[string]
		path   string
		want   string // "default" when no route matches
	}{
		{"prefix / matches all", []Route[string]{prefix("/", "root")}, "/anything/at/all", "root"},
		{"exact /foo matches /foo", []Route[string]{exact("/foo", "foo")}, "/foo", "foo"},
		{"exact /foo not /bar", []Route[string]{exact("/foo", "foo")}, "/bar", "default"},
		{"exact /foo not /foo/", []Route[string]{exact("/foo", "foo")}, "/foo/", "default"},
		{"exact /foo/ not /foo", []Route[string]{exact("/foo/", "foo")}, "/foo", "default"},
		{"prefix /foo matches /foo", []Route[string]{prefix("/foo", "foo")}, "/foo", "foo"},
		{"prefix /foo matches /foo/", []Route[string]{prefix("/foo", "foo")}, "/foo/", "foo"},
		{"prefix /foo/ matches /foo", []Route[string]{prefix("/foo/", "foo")}, "/foo", "foo"},
		{"prefix /foo/ matches /foo/", []Route[string]{prefix("/foo/", "foo")}, "/foo/", "foo"},
		{"prefix /aaa/bb not /aaa/bbb", []Route[string]{prefix("/aaa/bb", "bb")}, "/aaa/bbb", "default"},
		{"prefix /aaa/bbb matches /aaa/bbb", []Route[string]{prefix("/aaa/bbb", "bbb")}, "/aaa/bbb", "bbb"},
		{"prefix /aaa/bbb/ ignores trailing slash", []Route[string]{prefix("/aaa/bbb/", "bbb")}, "/aaa/bbb", "bbb"},
		{"prefix /aaa/bbb matches trailing slash", []Route[string]{prefix("/aaa/bbb", "bbb")}, "/aaa/bbb/", "bbb"},
		{"prefix /aaa/bbb matches subpath", []Route[string]{prefix("/aaa/bbb", "bbb")}, "/aaa/bbb/ccc", "bbb"},
		{"prefix /aaa/bbb not string prefix", []Route[string]{prefix("/aaa/bbb", "bbb")}, "/aaa/bbbxyz", "default"},
		{"prefixes / and /aaa: /aaa/ccc", []Route[string]{prefix("/", "root"), prefix("/aaa", "aaa")}, "/aaa/ccc", "aaa"},
		{"prefixes /, /aaa, /aaa/bbb: /aaa/bbb", []Route[string]{prefix("/", "root"), prefix("/aaa", "aaa"), prefix("/aaa/bbb", "bbb")}, "/aaa/bbb", "bbb"},
		{"prefixes /, /aaa, /aaa/bbb: /ccc", []Route[string]{prefix("/", "root"), prefix("/aaa", "aaa"), prefix("/aaa/bbb", "bbb")}, "/ccc", "root"},
		{"prefix /aaa: /ccc uses default", []Route[string]{prefix("/aaa", "aaa")}, "/ccc", "default"},
		{"mixed /foo prefers exact", []Route[string]{prefix("/foo", "prefix"), exact("/foo", "exact")}, "/foo", "exact"},
		{"mixed /foo prefix for /foo/x", []Route[string]{prefix("/foo", "prefix"), exact("/foo", "exact")}, "/foo/x", "prefix"},
		{"prefix is case sensitive", []Route[string]{prefix("/Foo", "foo")}, "/foo", "default"},
		{"longest prefix wins whatever the order", []Route[string]{prefix("/a/b/c", "abc"), prefix("/a", "a")}, "/a/b/c/d", "abc"},
		{"prefix beats regex", []Route[string]{regex("/api/.*", "re"), prefix("/api", "prefix")}, "/api/x", "prefix"},
		{"regex when no prefix", []Route[string]{regex("/api/.*", "re"), prefix("/web", "web")}, "/api/x", "re"},
		{"regexes in configured order", []Route[string]{regex("/a", "first"), regex("/a/b", "second")}, "/a/b", "first"},
		{"regex is case insensitive", []Route[string]{regex("/API", "re")}, "/api", "re"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			table := mustBuild(t, Site[string]{Domains: []string{"example.com"}, Routes: tc.routes, Default: "default"})
			if got := lookup(table, "example.com", tc.path); got != tc.want {
				t.Errorf("%s: got %q, want %q", tc.path, got, tc.want)
			}
		})
	}
}

func TestHostSelection(t *testing.T) {
	table := mustBuild(t,
		Site[string]{Domains: []string{"foo.example.com"}, Routes: []Route[string]{prefix("/api", "exact-host")}, Default: "exact-host-default"},
		Site[string]{Domains: []string{"*.example.com"}, Routes: []Route[string]{prefix("/", "wildcard")}, Default: "wildcard-default"},
		Site[string]{Domains: []string{"*"}, Routes: []Route[string]{prefix("/", "catch-all")}, Default: "catch-all-default"},
	)
	cases := []struct{ host, path, want string }{
		{"foo.example.com", "/api/x", "exact-host"},
		// A host that matched exactly but whose path matched nothing goes to
		// its default, never to the wildcard.
		{"foo.example.com", "/other", "exact-host-default"},
		{"bar.example.com", "/other", "wildcard"},
		// One label only.
		{"a.bar.example.com", "/", "catch-all"},
		{"example.com", "/", "catch-all"},
		{"unknown.test", "/", "catch-all"},
	}
	for _, tc := range cases {
		t.Run(tc.host+tc.path, func(t *testing.T) {
			if got := lookup(table, tc.host, tc.path); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestDeepWildcardSelection checks the precedence of the "**." domains:
// exact, then the one-label wildcard, then the "**." domain of the longest
// suffix, then the catch-all.
func TestDeepWildcardSelection(t *testing.T) {
	site := func(domain, value string) Site[string] {
		return Site[string]{Domains: []string{domain}, Default: value}
	}
	table := mustBuild(t,
		site("a.example.com", "exact"),
		site("*.example.com", "one-label"),
		site("**.example.com", "deep"),
		site("**.b.example.com", "deep-b"),
		site("*.c.b.example.com", "one-label-c"),
		site("**.com", "deep-com"),
		site("*", "catch-all"),
	)
	cases := []struct{ host, want string }{
		{"a.example.com", "exact"},
		{"x.example.com", "one-label"},
		{"b.example.com", "one-label"},
		{"x.y.example.com", "deep"},
		{"a.a.example.com", "deep"},
		{"x.b.example.com", "deep-b"},
		{"x.y.z.b.example.com", "deep-b"},
		{"x.c.b.example.com", "one-label-c"},
		{"x.y.c.b.example.com", "deep-b"},
		{"example.com", "deep-com"},
		{"other.com", "deep-com"},
		{"x.y.other.com", "deep-com"},
		// A "**." domain never matches the name after it, nor a host
		// with an empty label.
		{"com", "catch-all"},
		{"x..example.com", "catch-all"},
		{".example.com", "catch-all"},
		{"example.org", "catch-all"},
		{"", "catch-all"},
	}
	for _, tc := range cases {
		t.Run(tc.host, func(t *testing.T) {
			if got := lookup(table, tc.host, "/"); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestDeepWildcardWithoutCatchAll checks that a "**." domain does not
// serve the name after it or other names.
func TestDeepWildcardWithoutCatchAll(t *testing.T) {
	table := mustBuild(t, Site[string]{Domains: []string{"**.example.com"}, Default: "deep"})
	for _, host := range []string{"example.com", "xexample.com", "x.example.org", "x.example.com.evil.test", ""} {
		if _, _, err := table.Lookup(host, "/", nil); err != ErrNoDomain {
			t.Errorf("host %q: got a route, want none (404)", host)
		}
	}
	for _, host := range []string{"a.example.com", "a.b.example.com", "a.b.c.d.example.com"} {
		if got := lookup(table, host, "/"); got != "deep" {
			t.Errorf("host %q: got %q, want deep", host, got)
		}
	}
}

func TestNoCatchAllIsNotFound(t *testing.T) {
	table := mustBuild(t, Site[string]{Domains: []string{"*.example.com"}, Routes: []Route[string]{prefix("/", "wildcard")}})
	for _, host := range []string{"foo.bar.example.com", "example.com", "other.test", ""} {
		if _, _, err := table.Lookup(host, "/", nil); err != ErrNoDomain {
			t.Errorf("host %q: got a route, want none (404)", host)
		}
	}
}

func TestRegexAnchoring(t *testing.T) {
	table := mustBuild(t, Site[string]{
		Domains: []string{"example.com"},
		Routes:  []Route[string]{regex("/alpha|/beta", "alt"), regexWithCaptures("/api/(v[0-9]+)/(.*)", "api")},
		Default: "default",
	})
	cases := []struct{ path, want string }{
		{"/alpha", "alt"},
		{"/beta", "alt"},
		// Like nginx, a regex route matches a prefix of the path.
		{"/beta/gamma", "alt"},
		// "^a|b" in nginx anchors only the first branch; ours anchors both.
		{"/xbeta", "default"},
		{"/x/alpha", "default"},
		{"/api/v2/users", "api"},
		{"/v1/api/v2/users", "default"},
	}
	for _, tc := range cases {
		if got := lookup(table, "example.com", tc.path); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.path, got, tc.want)
		}
	}
	_, captures, _ := table.Lookup("example.com", "/api/v2/users/7", nil)
	if want := []string{"/api/v2/users/7", "v2", "users/7"}; !slices.Equal(captures, want) {
		t.Errorf("captures: got %q, want %q", captures, want)
	}
	if _, captures, _ := table.Lookup("example.com", "/beta/x", nil); captures != nil {
		t.Errorf("a route that did not ask for captures got %q", captures)
	}
}

func TestHeaderAndCookieMatchers(t *testing.T) {
	canaryHeader := prefix("/", "canary-header")
	canaryHeader.Match.Headers = []config.HeaderMatch{{Name: "x-canary", Exact: "always"}}
	canaryCookie := prefix("/", "canary-cookie")
	canaryCookie.Match.Cookies = []config.CookieMatch{{Name: "canary", Regex: "always|yes"}}
	present := prefix("/only", "present")
	present.Match.Headers = []config.HeaderMatch{{Name: "X-Debug"}}
	table := mustBuild(t, Site[string]{
		Domains: []string{"example.com"},
		Routes:  []Route[string]{prefix("/", "main"), canaryHeader, canaryCookie, present},
		Default: "default",
	})
	cases := []struct {
		name   string
		path   string
		header http.Header
		want   string
	}{
		{"no header", "/", nil, "main"},
		{"header matches", "/", http.Header{"X-Canary": {"always"}}, "canary-header"},
		{"header value differs", "/", http.Header{"X-Canary": {"never"}}, "main"},
		{"header before cookie in order", "/", http.Header{"X-Canary": {"always"}, "Cookie": {"canary=always"}}, "canary-header"},
		{"cookie matches regex", "/", http.Header{"Cookie": {"a=b; canary=yes; c=d"}}, "canary-cookie"},
		{"quoted cookie", "/", http.Header{"Cookie": {`canary="always"`}}, "canary-cookie"},
		{"cookie regex is whole value", "/", http.Header{"Cookie": {"canary=alwaysnot"}}, "main"},
		{"presence matcher", "/only/x", http.Header{"X-Debug": {""}}, "present"},
		// A group whose conditional routes all fail and which has no plain
		// route falls through to shorter prefixes.
		{"falls through to shorter prefix", "/only/x", nil, "main"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, _, _ := table.Lookup("example.com", tc.path, &Request{Header: tc.header})
			if v != tc.want {
				t.Errorf("got %q, want %q", v, tc.want)
			}
		})
	}
}

func TestBuildRefusesDuplicates(t *testing.T) {
	cases := []struct {
		name  string
		sites []Site[string]
	}{
		{"same domain twice", []Site[string]{{Domains: []string{"a.test"}}, {Domains: []string{"a.test"}}}},
		{"two catch-alls", []Site[string]{{Domains: []string{"*"}}, {Domains: []string{"*"}}}},
		{"same wildcard twice", []Site[string]{{Domains: []string{"*.a.test"}}, {Domains: []string{"*.a.test"}}}},
		{"same deep wildcard twice", []Site[string]{{Domains: []string{"**.a.test"}}, {Domains: []string{"**.a.test"}}}},
		{"prefix with and without slash", []Site[string]{{Domains: []string{"a.test"}, Routes: []Route[string]{prefix("/x", "1"), prefix("/x/", "2")}}}},
		{"bad regex", []Site[string]{{Domains: []string{"a.test"}, Routes: []Route[string]{regex("(", "1")}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Build(tc.sites, 0); err == nil {
				t.Fatal("got no error, want one")
			}
		})
	}
}

func TestNormalizePath(t *testing.T) {
	cases := []struct {
		in, want string
		err      error
	}{
		{"/", "/", nil},
		{"/a/b", "/a/b", nil},
		{"/a/b/", "/a/b/", nil},
		{"//a///b", "/a/b", nil},
		{"/a/./b", "/a/b", nil},
		{"/a/b/.", "/a/b/", nil},
		{"/a/b/..", "/a/", nil},
		{"/a/../b", "/b", nil},
		{"/a/b/../../c/", "/c/", nil},
		{"/.well-known/x", "/.well-known/x", nil},
		{"/a/..b/c.", "/a/..b/c.", nil},
		{"/..", "", ErrPathAboveRoot},
		{"/a/../../b", "", ErrPathAboveRoot},
		{"/a\x00b", "", ErrNULInPath},
		{"*", "", ErrPathNotAbsolute},
		{"", "", ErrPathNotAbsolute},
		// net/http has already decoded %2F and %2e: they are resolved here.
		{"/group/project/../admin", "/group/admin", nil},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := NormalizePath(tc.in)
			if err != tc.err || got != tc.want {
				t.Errorf("got %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestNormalizeHost(t *testing.T) {
	cases := map[string]string{
		"example.com":       "example.com",
		"Example.COM":       "example.com",
		"example.com:8443":  "example.com",
		"example.com.":      "example.com",
		"example.com.:80":   "example.com",
		"[::1]:8080":        "[::1]",
		"127.0.0.1:80":      "127.0.0.1",
		"":                  "",
		"WWW.Example.Com.":  "www.example.com",
		"xn--bcher-kva.com": "xn--bcher-kva.com",
	}
	for in, want := range cases {
		if got := NormalizeHost(in); got != want {
			t.Errorf("NormalizeHost(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBuildKeepsBothWildcards(t *testing.T) {
	table, err := Build([]Site[string]{{Domains: []string{"*.a.test"}, Default: "one"}, {Domains: []string{"**.a.test"}, Default: "deep"}}, 0)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if got := lookup(table, "x.a.test", "/"); got != "one" {
		t.Errorf("x.a.test: got %q, want one", got)
	}
	if got := lookup(table, "x.y.a.test", "/"); got != "deep" {
		t.Errorf("x.y.a.test: got %q, want deep", got)
	}
}

func TestDeepWildcardLookupDoesNotAllocate(t *testing.T) {
	table := hostTable(100, 100)
	allocs := testing.AllocsPerRun(1000, func() {
		if v, _, err := table.Lookup("a.b.c.deep-50.example.com", "/", nil); err != nil || v != "deep" {
			t.Fatal("no route")
		}
	})
	if allocs != 0 {
		t.Errorf("got %v allocations per lookup, want 0", allocs)
	}
}

func TestLookupDoesNotAllocate(t *testing.T) {
	table := benchTable(100, 10)
	req := &Request{Method: http.MethodGet, Header: http.Header{"Cookie": {"a=b"}}, RawQuery: "a=1&b=2"}
	allocs := testing.AllocsPerRun(1000, func() {
		if _, _, err := table.Lookup("host-50.example.com", "/r5/some/deeper/path", req); err != nil {
			t.Fatal("no route")
		}
		if _, err := NormalizePath("/r5/some/deeper/path"); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("got %v allocations per lookup, want 0", allocs)
	}
}

// benchTable has hosts sites, each with routes prefix routes.
func benchTable(hosts, routes int) *Table[string] {
	sites := make([]Site[string], hosts)
	for h := range sites {
		rs := make([]Route[string], routes)
		for r := range rs {
			rs[r] = prefix(fmt.Sprintf("/r%d", r), fmt.Sprintf("h%d-r%d", h, r))
		}
		sites[h] = Site[string]{Domains: []string{fmt.Sprintf("host-%d.example.com", h)}, Routes: rs, Default: "default"}
	}
	table, err := Build(sites, 0)
	if err != nil {
		panic(err)
	}
	return table
}

// BenchmarkRoute measures one lookup (host and path normalisation included)
// in tables of 10, 1,000 and 10,000 hosts with 10 routes each, and of one
// host with that many routes.
func BenchmarkRoute(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			table := benchTable(n, 10)
			host := fmt.Sprintf("host-%d.example.com:443", n/2)
			b.ReportAllocs()
			for b.Loop() {
				benchLookup(b, table, host, "/r7/a/b")
			}
		})
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			table := benchTable(1, n)
			path := fmt.Sprintf("/r%d/a/b", n/2)
			b.ReportAllocs()
			for b.Loop() {
				benchLookup(b, table, "host-0.example.com", path)
			}
		})
	}
	b.Run("regex", func(b *testing.B) {
		routes := make([]Route[string], 100)
		for i := range routes {
			routes[i] = regex(fmt.Sprintf("/api/v%d/(.*)", i), "re")
		}
		table := mustBuild(b, Site[string]{Domains: []string{"example.com"}, Routes: routes})
		b.ReportAllocs()
		for b.Loop() {
			benchLookup(b, table, "example.com", "/api/v50/users")
		}
	})
}

// BenchmarkHost measures how a lookup finds its host among 1,000 exact
// names, 1,000 one-label wildcards and a catch-all: by its exact name, its
// wildcard, or the catch-all, in that table ("plain") and in one with
// 1,000 "**." domains besides ("deep"), where a host three labels under
// one of those is looked up too.
func BenchmarkHost(b *testing.B) {
	hosts := map[string]string{
		"exact":     "host-500.example.com",
		"wildcard":  "x.host-500.example.com",
		"catch-all": "a.b.c.unknown.test",
	}
	for _, deep := range []int{0, 1000} {
		table := hostTable(1000, deep)
		kinds := []string{"exact", "wildcard", "catch-all"}
		name := "plain"
		if deep > 0 {
			hosts["deep"] = "a.b.c.deep-500.example.com"
			kinds, name = append(kinds, "deep"), "deep"
		}
		for _, kind := range kinds {
			b.Run(name+"/"+kind, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					benchLookup(b, table, hosts[kind], "/")
				}
			})
		}
	}
}

// hostTable has, for i below n, the domains host-<i>.example.com and
// *.host-<i>.example.com, and for i below deep **.deep-<i>.example.com,
// each of its own site, and the catch-all.
func hostTable(n, deep int) *Table[string] {
	sites := []Site[string]{{Domains: []string{"*"}, Default: "catch-all"}}
	for i := range n {
		sites = append(sites,
			Site[string]{Domains: []string{fmt.Sprintf("host-%d.example.com", i)}, Default: "exact"},
			Site[string]{Domains: []string{fmt.Sprintf("*.host-%d.example.com", i)}, Default: "wildcard"})
	}
	for i := range deep {
		sites = append(sites, Site[string]{Domains: []string{fmt.Sprintf("**.deep-%d.example.com", i)}, Default: "deep"})
	}
	table, err := Build(sites, 0)
	if err != nil {
		panic(err)
	}
	return table
}

func benchLookup(b *testing.B, table *Table[string], host, path string) {
	p, err := NormalizePath(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := table.Lookup(NormalizeHost(host), p, nil); err != nil {
		b.Fatal("no route")
	}
}
