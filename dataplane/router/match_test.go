package router

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// TestMethodAndQueryMatchers follows the Gateway API's HTTPRouteMethodMatching
// and HTTPRouteQueryParamMatching: one method, case-sensitive; query names
// case-sensitive, the first of repeated values counts, exact and regex.
func TestMethodAndQueryMatchers(t *testing.T) {
	post := prefix("/", "post")
	post.Match.Method = http.MethodPost
	getColor := prefix("/", "get-color")
	getColor.Match.Method = http.MethodGet
	getColor.Match.Query = []config.QueryMatch{{Name: "color", Exact: "blue"}}
	animal := prefix("/", "animal")
	animal.Match.Query = []config.QueryMatch{{Name: "animal", Exact: "whale"}, {Name: "id", Regex: "[0-9]+"}}
	present := exact("/p", "present")
	present.Match.Query = []config.QueryMatch{{Name: "debug"}}
	regexRoute := regex("/re/.*", "regex-route")
	regexRoute.Match.Query = []config.QueryMatch{{Name: "v", Exact: "2"}}
	table := mustBuild(t, Site[string]{
		Domains: []string{"example.com"},
		Routes:  []Route[string]{prefix("/", "main"), getColor, post, animal, present},
	}, Site[string]{
		Domains: []string{"re.example.com"},
		Routes:  []Route[string]{regexRoute, regex("/re/.*", "regex-plain")},
	})
	cases := []struct {
		name, host, method, path, query, want string
	}{
		{"method matches", "example.com", "POST", "/", "", "post"},
		{"method is case-sensitive", "example.com", "post", "/", "", "main"},
		{"other method", "example.com", "PUT", "/", "", "main"},
		{"method and query", "example.com", "GET", "/x", "color=blue", "get-color"},
		{"query without its method", "example.com", "HEAD", "/x", "color=blue", "main"},
		{"query name is case-sensitive", "example.com", "GET", "/x", "Color=blue", "main"},
		{"query value is case-sensitive", "example.com", "GET", "/x", "color=Blue", "main"},
		{"first value counts", "example.com", "GET", "/x", "color=red&color=blue", "main"},
		{"first value counts, matching", "example.com", "GET", "/x", "color=blue&color=red", "get-color"},
		{"all query matchers", "example.com", "GET", "/x", "id=42&animal=whale", "animal"},
		{"regex is whole value", "example.com", "GET", "/x", "animal=whale&id=42a", "main"},
		{"one query matcher missing", "example.com", "GET", "/x", "animal=whale", "main"},
		{"decoded name and value", "example.com", "GET", "/x", "c%6Flor=bl%75e", "get-color"},
		{"plus is a space", "example.com", "DELETE", "/x", "animal=whale&id=1&x=a+b", "animal"},
		{"bad escape is skipped", "example.com", "GET", "/x", "color=%zz&color=blue", "get-color"},
		{"presence", "example.com", "GET", "/p", "debug", "present"},
		{"presence with empty value", "example.com", "GET", "/p", "debug=", "present"},
		{"absent falls through", "example.com", "GET", "/p", "x=1", "main"},
		{"regex route query", "re.example.com", "GET", "/re/a", "v=2", "regex-route"},
		{"regex route without query", "re.example.com", "GET", "/re/a", "v=3", "regex-plain"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, _, err := table.Lookup(tc.host, tc.path, &Request{Method: tc.method, RawQuery: tc.query})
			if err != nil || v != tc.want {
				t.Errorf("got %q, %v; want %q", v, err, tc.want)
			}
		})
	}
	if v, _, _ := table.Lookup("example.com", "/", nil); v != "main" {
		t.Errorf("nil request: got %q, want main", v)
	}
}

func TestQueryRegexBound(t *testing.T) {
	r := prefix("/", "q")
	r.Match.Query = []config.QueryMatch{{Name: "q", Regex: "a*"}}
	table, err := Build([]Site[string]{{Domains: []string{"example.com"}, Routes: []Route[string]{r}, Default: "default"}}, 16)
	if err != nil {
		t.Fatal(err)
	}
	if v, _, err := table.Lookup("example.com", "/", &Request{RawQuery: "q=" + strings.Repeat("a", 16)}); err != nil || v != "q" {
		t.Errorf("at the bound: got %q, %v; want q", v, err)
	}
	if _, _, err := table.Lookup("example.com", "/", &Request{RawQuery: "q=" + strings.Repeat("a", 17)}); err != ErrValueTooLong {
		t.Errorf("over the bound: got %v, want ErrValueTooLong", err)
	}
}

func TestQueryLookupDoesNotAllocate(t *testing.T) {
	r := prefix("/", "q")
	r.Match.Method = http.MethodGet
	r.Match.Query = []config.QueryMatch{{Name: "color", Exact: "blue"}, {Name: "id", Regex: "[0-9]+"}}
	table := mustBuild(t, Site[string]{Domains: []string{"example.com"}, Routes: []Route[string]{r}})
	req := &Request{Method: http.MethodGet, RawQuery: "a=1&color=blue&id=7"}
	allocs := testing.AllocsPerRun(1000, func() {
		if v, _, _ := table.Lookup("example.com", "/x", req); v != "q" {
			t.Fatalf("got %q, want q", v)
		}
	})
	if allocs != 0 {
		t.Errorf("a lookup with query matchers allocated %v times, want 0", allocs)
	}
}

// BenchmarkRouteQuery measures a lookup that passes over two method and
// query routes of a path to the third.
func BenchmarkRouteQuery(b *testing.B) {
	post := prefix("/api", "post")
	post.Match.Method = http.MethodPost
	q := prefix("/api", "query")
	q.Match.Query = []config.QueryMatch{{Name: "version", Exact: "2"}, {Name: "id", Regex: "[0-9]+"}}
	table := mustBuild(b, Site[string]{Domains: []string{"example.com"}, Routes: []Route[string]{post, q, prefix("/api", "plain")}})
	req := &Request{Method: http.MethodGet, RawQuery: "a=1&b=2&version=2&id=12345"}
	b.ReportAllocs()
	for b.Loop() {
		if v, _, _ := table.Lookup("example.com", "/api/users", req); v != "query" {
			b.Fatalf("got %q", v)
		}
	}
}
