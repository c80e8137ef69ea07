package router

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// boundedBuild builds sites whose regexes read at most limit bytes.
func boundedBuild(t testing.TB, limit int, sites ...Site[string]) *Table[string] {
	t.Helper()
	table, err := Build(sites, limit)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return table
}

// pathOf returns a path of n bytes starting with head.
func pathOf(head string, n int) string {
	return head + strings.Repeat("a", n-len(head))
}

// TestRegexPathBound checks that a path longer than the bound is refused
// when it reaches regex routes, and only then: exact and prefix routes
// match paths of any length, and a host without regex routes never refuses.
func TestRegexPathBound(t *testing.T) {
	const limit = 64
	withRegex := Site[string]{
		Domains: []string{"re.example.com"},
		Routes:  []Route[string]{exact(pathOf("/exact/", 100), "exact"), prefix("/prefix", "prefix"), regex("/api/.*", "re")},
		Default: "default",
	}
	withoutRegex := Site[string]{
		Domains: []string{"plain.example.com"},
		Routes:  []Route[string]{prefix("/prefix", "prefix")},
		Default: "default",
	}
	table := boundedBuild(t, limit, withRegex, withoutRegex)
	cases := []struct {
		name, host, path string
		want             string
		err              error
	}{
		{"regex route, path at the bound", "re.example.com", pathOf("/api/", limit), "re", nil},
		{"regex route, path over the bound", "re.example.com", pathOf("/api/", limit+1), "", ErrPathTooLong},
		{"no route matches, path over the bound", "re.example.com", pathOf("/other/", limit+1), "", ErrPathTooLong},
		{"no route matches, path at the bound", "re.example.com", pathOf("/other/", limit), "default", nil},
		{"exact route, long path", "re.example.com", pathOf("/exact/", 100), "exact", nil},
		{"prefix route, long path", "re.example.com", pathOf("/prefix/", 1000), "prefix", nil},
		{"host without regex routes, long path", "plain.example.com", pathOf("/other/", 1000), "default", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, _, err := table.Lookup(tc.host, tc.path, nil)
			if err != tc.err || (err == nil && v != tc.want) {
				t.Errorf("Lookup(%d bytes): got %q, %v; want %q, %v", len(tc.path), v, err, tc.want, tc.err)
			}
		})
	}
	t.Run("no bound", func(t *testing.T) {
		table := mustBuild(t, withRegex)
		if v, _, err := table.Lookup("re.example.com", pathOf("/api/", 100000), nil); err != nil || v != "re" {
			t.Errorf("Lookup without a bound: got %q, %v; want \"re\", no error", v, err)
		}
	})
}

// TestRegexValueBound checks that a header or cookie regex reads at most
// the bound from a request, all the values it tests together, and that
// exact matchers are not bounded.
func TestRegexValueBound(t *testing.T) {
	const limit = 16
	headerRegex := prefix("/", "header")
	headerRegex.Match.Headers = []config.HeaderMatch{{Name: "X-Canary", Regex: "yes.*"}}
	cookieRegex := prefix("/", "cookie")
	cookieRegex.Match.Cookies = []config.CookieMatch{{Name: "canary", Regex: "yes.*"}}
	headerExact := prefix("/exact", "exact")
	headerExact.Match.Headers = []config.HeaderMatch{{Name: "X-Canary", Exact: strings.Repeat("n", 40)}}
	regexCond := regex("/re/.*", "regex")
	regexCond.Match.Headers = []config.HeaderMatch{{Name: "X-Re", Regex: "yes.*"}}
	table := boundedBuild(t, limit, Site[string]{
		Domains: []string{"example.com"},
		Routes:  []Route[string]{prefix("/", "main"), headerRegex, cookieRegex, headerExact},
		Default: "default",
	}, Site[string]{
		Domains: []string{"re.example.com"},
		Routes:  []Route[string]{regexCond},
		Default: "default",
	})
	long := strings.Repeat("n", limit+1)
	cases := []struct {
		name   string
		path   string
		header http.Header
		want   string
		err    error
	}{
		{"header value at the bound", "/", http.Header{"X-Canary": {"yes" + strings.Repeat("n", limit-3)}}, "header", nil},
		{"header value over the bound", "/", http.Header{"X-Canary": {long}}, "", ErrValueTooLong},
		{"header values over the bound together", "/", http.Header{"X-Canary": {strings.Repeat("n", 10), strings.Repeat("n", 7)}}, "", ErrValueTooLong},
		{"a match before the bound is reached", "/", http.Header{"X-Canary": {"yes", long}}, "header", nil},
		{"cookie value over the bound", "/", http.Header{"Cookie": {"canary=" + long}}, "", ErrValueTooLong},
		{"cookie values over the bound together", "/", http.Header{"Cookie": {"canary=" + strings.Repeat("n", 10), "a=b; canary=" + strings.Repeat("n", 7)}}, "", ErrValueTooLong},
		{"other cookies are not read", "/", http.Header{"Cookie": {"other=" + long + "; canary=yes"}}, "cookie", nil},
		{"exact matcher, long value", "/exact", http.Header{"X-Canary": {strings.Repeat("n", 40)}}, "exact", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, _, err := table.Lookup("example.com", tc.path, &Request{Header: tc.header})
			if err != tc.err || (err == nil && v != tc.want) {
				t.Errorf("Lookup: got %q, %v; want %q, %v", v, err, tc.want, tc.err)
			}
		})
	}
	t.Run("condition of a regex route", func(t *testing.T) {
		if v, _, err := table.Lookup("re.example.com", "/re/x", &Request{Header: http.Header{"X-Re": {long}}}); err != ErrValueTooLong {
			t.Errorf("Lookup: got %q, %v; want ErrValueTooLong", v, err)
		}
		if v, _, err := table.Lookup("re.example.com", "/re/x", &Request{Header: http.Header{"X-Re": {"yes"}}}); err != nil || v != "regex" {
			t.Errorf("Lookup: got %q, %v; want \"regex\"", v, err)
		}
	})
}

// TestLongestPrefixOfLongPaths checks that the longest prefix still wins
// for paths much longer than every prefix of the host, with more prefix
// routes than a small map holds.
func TestLongestPrefixOfLongPaths(t *testing.T) {
	var routes []Route[string]
	for i := range 20 {
		routes = append(routes, prefix(fmt.Sprintf("/p%d", i), fmt.Sprintf("p%d", i)))
	}
	routes = append(routes, prefix("/p7/deep/er", "deeper"), prefix("/", "root"))
	table := mustBuild(t, Site[string]{Domains: []string{"example.com"}, Routes: routes})
	cases := []struct{ path, want string }{
		{"/p7" + strings.Repeat("/a", 5000), "p7"},
		{"/p7/deep/er" + strings.Repeat("/a", 5000), "deeper"},
		{"/p7/deep/er/", "deeper"},
		{"/p19/" + strings.Repeat("a", 10000), "p19"},
		{"/q" + strings.Repeat("/a", 5000), "root"},
	}
	for _, tc := range cases {
		if got := lookup(table, "example.com", tc.path); got != tc.want {
			t.Errorf("%.40s… (%d bytes): got %q, want %q", tc.path, len(tc.path), got, tc.want)
		}
	}
}

// worstAccepted is a host at the budget of the default limits: regex
// routes whose instructions add up to what the default input bound
// allows, each matching nothing of the path while keeping most of its
// program live, and the path of the longest length they read.
type worstAccepted struct {
	routes []Route[string]
	path   string
}

// worstShapes are the expressions that cost the most per instruction and
// byte: counted repetitions inside a loop keep every instruction live; a
// chain of .* keeps one thread per star; capture groups make every thread
// copy its submatches. Each takes n instructions or a few less.
var worstShapes = map[string]func(n int) string{
	"counted-in-loop": func(n int) string { return fmt.Sprintf("(?:.{0,%d})*!", (n-6)/2) },
	"star-chain":      func(n int) string { return strings.Repeat(".*", (n-4)/2) + "!" },
	"groups": func(n int) string {
		g := min(9, n/20)
		return fmt.Sprintf("(?:%s.{0,%d})*!", strings.Repeat("(.?)", g), (n-6-5*g)/2)
	},
}

// buildWorst builds the routes of a shape in regexes of per instructions
// until the application's budget is spent, and checks that validation
// accepts them.
func buildWorst(tb testing.TB, shape func(int) string, per int, captures bool) worstAccepted {
	lim := config.Limits{}
	budget := lim.RegexInstructionBudget()
	app := &config.Application{Domains: []string{"example.com"}}
	var w worstAccepted
	used := 0
	for i := 0; ; i++ {
		// A tail after the "!" that never matches keeps the routes apart.
		m, n := config.Match{}, 0
		for size := min(per, budget-used); size > 8 && n == 0; size-- {
			m = config.Match{Path: config.PathMatch{Regex: shape(size) + strings.Repeat("~", i)}}
			if n = m.RegexSize().Instructions; used+n > budget {
				n = 0
			}
		}
		if n == 0 {
			break
		}
		used += n
		app.Routes = append(app.Routes, &config.Route{Match: m, Action: config.Action{Pool: "p"}})
		w.routes = append(w.routes, Route[string]{Match: m, Value: "re", Captures: captures})
	}
	cfg := &config.Config{
		Server:  config.Server{Listeners: map[string]*config.Listener{"http": {Address: ":80"}}},
		Tenants: map[string]*config.Tenant{"t": {Applications: map[string]*config.Application{"a": app}, Pools: map[string]*config.Pool{"p": {}}}},
	}
	if err := cfg.Validate(); err != nil {
		tb.Fatalf("the worst case is not accepted: %v", err)
	}
	if used < budget*9/10 {
		tb.Fatalf("the worst case uses %d instructions of %d", used, budget)
	}
	w.path = ("/" + strings.Repeat("ab/", config.DefaultMaxRegexInputBytes/3+1))[:config.DefaultMaxRegexInputBytes]
	return w
}

// BenchmarkRegexWorstAccepted measures the lookup of the costliest request
// the default limits accept: a host whose regex routes spend the whole
// work budget (512 instructions at the default input bound of 8 KiB), in
// one regex or several, and a path of 8 KiB that none matches, so that
// every route runs to the end of it. ns/op is the CPU of that request.
func BenchmarkRegexWorstAccepted(b *testing.B) {
	for name, shape := range worstShapes {
		for _, per := range []int{512, 128, 32} {
			for _, captures := range []bool{false, true} {
				b.Run(fmt.Sprintf("%s/per=%d/captures=%v", name, per, captures), func(b *testing.B) {
					w := buildWorst(b, shape, per, captures)
					table := boundedBuild(b, config.DefaultMaxRegexInputBytes, Site[string]{Domains: []string{"example.com"}, Routes: w.routes, Default: "default"})
					for b.Loop() {
						if v, _, err := table.Lookup("example.com", w.path, nil); err != nil || v != "default" {
							b.Fatalf("Lookup: got %q, %v; want the default", v, err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkRegexOrdinaryHost measures a host of twenty rewrite routes of
// the form real Ingresses use, /serviceNN(/|$)(.*) with captures, and an
// 8 KiB path that matches none of them or the last one.
func BenchmarkRegexOrdinaryHost(b *testing.B) {
	var routes []Route[string]
	for i := range 20 {
		routes = append(routes, regexWithCaptures(fmt.Sprintf("/service%02d(/|$)(.*)", i), "re"))
	}
	table := boundedBuild(b, config.DefaultMaxRegexInputBytes, Site[string]{Domains: []string{"example.com"}, Routes: routes, Default: "default"})
	for name, head := range map[string]string{"none": "/other/", "last": "/service19/"} {
		b.Run("match="+name, func(b *testing.B) {
			path := pathOf(head, config.DefaultMaxRegexInputBytes)
			for b.Loop() {
				if _, _, err := table.Lookup("example.com", path, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRegexIssueCase is the request of issue 13 (F3): a path of 60 KB
// to a host of ten .{0,1000} and a literal, which cost 0.6 s a route
// before the bounds. That expression is now refused (20004 instructions);
// sent to the worst host that is accepted, the path is over the input
// bound and the lookup answers before any regex runs.
func BenchmarkRegexIssueCase(b *testing.B) {
	expr := strings.Repeat(".{0,1000}", 10) + "x"
	if _, err := config.CompilePathRegex(expr); err == nil {
		b.Fatalf("CompilePathRegex(ten .{0,1000} and x): got no error, want it refused")
	}
	w := buildWorst(b, worstShapes["counted-in-loop"], 512, false)
	table := boundedBuild(b, config.DefaultMaxRegexInputBytes, Site[string]{Domains: []string{"example.com"}, Routes: w.routes, Default: "default"})
	path := pathOf("/", 60000)
	for b.Loop() {
		if _, _, err := table.Lookup("example.com", path, nil); !errors.Is(err, ErrPathTooLong) {
			b.Fatalf("Lookup: got %v, want ErrPathTooLong", err)
		}
	}
}

// BenchmarkRouteLongPath measures the prefix lookup of a path of 60 KB in
// 30,000 segments on a host of 20 prefix routes: only the candidates no
// longer than the longest prefix are looked up.
func BenchmarkRouteLongPath(b *testing.B) {
	var routes []Route[string]
	for i := range 20 {
		routes = append(routes, prefix(fmt.Sprintf("/api%d", i), "api"))
	}
	table := mustBuild(b, Site[string]{Domains: []string{"example.com"}, Routes: routes, Default: "default"})
	path := strings.Repeat("/a", 30000)
	for b.Loop() {
		if v, _, err := table.Lookup("example.com", path, nil); err != nil || v != "default" {
			b.Fatalf("Lookup: got %q, %v; want the default", v, err)
		}
	}
}
