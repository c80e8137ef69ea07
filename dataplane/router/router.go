// Package router is the data plane's routing table: host first (exact, then
// a wildcard of one left-most label, then the wildcard of one or more
// left-most labels with the longest suffix, then the catch-all), then the path
// within that host (exact, then the longest whole-segment prefix, then
// regexes in configured order), then optional method, header, cookie and
// query parameter matchers.
//
// A Table is built once per configuration and never changes, so lookups
// take no locks; only regex routes run a regex, only routes with query
// matchers read the query (scanned in place, never parsed into a map), and
// a lookup allocates nothing unless a regex route matches (for its
// captures) or a query parameter it tests is percent-encoded.
//
// What a lookup may spend is bounded: each regex reads at most the table's
// regex input bound from a request (the path, or the values a header or
// cookie or query regex tests), or the lookup fails with ErrPathTooLong or
// ErrValueTooLong; prefix candidates longer than the host's longest prefix
// are not looked up.
package router

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// Errors of Lookup.
var (
	// ErrNoDomain means that no domain of the table matches the host.
	ErrNoDomain = errors.New("no application serves this host")
	// ErrPathTooLong means that the path reached the host's regex routes
	// and is longer than the regex input bound (answered 414).
	ErrPathTooLong = errors.New("the path is longer than the regex routes of this host read")
	// ErrValueTooLong means that a header, cookie or query regex would
	// read more than the regex input bound from the request (answered 431).
	ErrValueTooLong = errors.New("the values a header, cookie or query regex of this host tests are longer than it reads")
)

// Request is what a lookup reads of a request besides its host and path:
// the parts method, header, cookie and query matchers test. Only routes
// with query matchers read RawQuery.
type Request struct {
	Method   string
	Header   http.Header
	RawQuery string
}

// Route is one route of a Site: a match and the value a lookup returns.
type Route[R any] struct {
	Match config.Match
	Value R
	// Captures asks a regex route's lookups for its submatches (for a
	// rewrite with $1..$9); without it a regex route only tests the path,
	// which costs less and allocates nothing.
	Captures bool
}

// Site is the input of one application: its domains, routes and the value
// of requests that match a domain but no route.
type Site[R any] struct {
	Domains []string
	Routes  []Route[R]
	Default R
	// Scopes names the tables of BuildScoped the site is in; empty puts it
	// in every one. Build ignores it.
	Scopes []string
}

// Table is an immutable routing table.
type Table[R any] struct {
	exact    map[string]*host[R]
	wildcard map[string]*host[R] // keyed by the suffix after "*": ".example.com"
	deep     map[string]*host[R] // keyed by the suffix after "**": ".example.com"
	// longestDeep is the length of the longest key of deep; 0 when there
	// is none, and lookups then never read deep.
	longestDeep int
	catchAll    *host[R]
}

type host[R any] struct {
	exact  map[string]*group[R]
	prefix map[string]*group[R] // keyed by the prefix without its trailing slash; "/" is ""
	// longestPrefix is the length of the longest key of prefix.
	longestPrefix int
	regex         []regexRoute[R]
	// maxRegexInput bounds the path the regexes read (0: no bound).
	maxRegexInput int
	def           R
}

// group holds the routes of one path: those with method, header, cookie
// or query matchers in configured order, then the one without.
type group[R any] struct {
	conditional []conditionalRoute[R]
	plain       R
	hasPlain    bool
}

type conditionalRoute[R any] struct {
	cond  conditions
	value R
}

type regexRoute[R any] struct {
	re       *regexp.Regexp
	cond     conditions
	value    R
	captures bool
}

// Build compiles sites into a Table whose regexes read at most
// maxRegexInput bytes of a request each (0: no bound). Errors name the site
// and route; the configuration's Validate reports the same problems with
// field paths.
func Build[R any](sites []Site[R], maxRegexInput int) (*Table[R], error) {
	tables, err := build(sites, []string{""}, func(*Site[R], string) bool { return true }, maxRegexInput)
	if err != nil {
		return nil, err
	}
	return tables[""], nil
}

// BuildScoped compiles sites into one Table per scope (a listener, for the
// data plane): each holds the sites whose Scopes name it, and those
// without Scopes. A site's routes are compiled once and shared by its
// tables. A domain may be served by two sites of different scopes, not
// twice in one.
func BuildScoped[R any](sites []Site[R], scopes []string, maxRegexInput int) (map[string]*Table[R], error) {
	return build(sites, scopes, func(s *Site[R], scope string) bool {
		return len(s.Scopes) == 0 || slices.Contains(s.Scopes, scope)
	}, maxRegexInput)
}

func build[R any](sites []Site[R], scopes []string, in func(*Site[R], string) bool, maxRegexInput int) (map[string]*Table[R], error) {
	tables := make(map[string]*Table[R], len(scopes))
	for _, scope := range scopes {
		tables[scope] = &Table[R]{exact: map[string]*host[R]{}, wildcard: map[string]*host[R]{}, deep: map[string]*host[R]{}}
	}
	for i := range sites {
		h, err := buildHost(&sites[i], maxRegexInput)
		if err != nil {
			return nil, fmt.Errorf("site %d: %w", i, err)
		}
		for _, scope := range scopes {
			if !in(&sites[i], scope) {
				continue
			}
			for _, d := range sites[i].Domains {
				if err := tables[scope].addDomain(d, h); err != nil {
					return nil, fmt.Errorf("site %d: %w%s", i, err, inScope(scope))
				}
			}
		}
	}
	return tables, nil
}

// inScope names the scope of a Table in errors; Build's has none.
func inScope(scope string) string {
	if scope == "" {
		return ""
	}
	return " in " + scope
}

func (t *Table[R]) addDomain(d string, h *host[R]) error {
	switch {
	case d == "*":
		if t.catchAll != nil {
			return fmt.Errorf("the catch-all domain is served twice")
		}
		t.catchAll = h
		return nil
	case strings.HasPrefix(d, "**."):
		t.longestDeep = max(t.longestDeep, len(d)-2)
		return addOnce(t.deep, d[2:], d, h)
	case strings.HasPrefix(d, "*."):
		return addOnce(t.wildcard, d[1:], d, h)
	default:
		return addOnce(t.exact, d, d, h)
	}
}

func addOnce[R any](hosts map[string]*host[R], key, domain string, h *host[R]) error {
	if hosts[key] != nil {
		return fmt.Errorf("domain %s is served twice", domain)
	}
	hosts[key] = h
	return nil
}

func buildHost[R any](s *Site[R], maxRegexInput int) (*host[R], error) {
	h := &host[R]{exact: map[string]*group[R]{}, prefix: map[string]*group[R]{}, maxRegexInput: maxRegexInput, def: s.Default}
	for i := range s.Routes {
		if err := h.add(&s.Routes[i]); err != nil {
			return nil, fmt.Errorf("route %d: %w", i, err)
		}
	}
	return h, nil
}

func (h *host[R]) add(r *Route[R]) error {
	cond, err := compileConditions(&r.Match, h.maxRegexInput)
	if err != nil {
		return err
	}
	p := r.Match.Path
	switch {
	case p.Regex != "":
		re, err := config.CompilePathRegex(p.Regex)
		if err != nil {
			return err
		}
		h.regex = append(h.regex, regexRoute[R]{re: re, cond: cond, value: r.Value, captures: r.Captures})
		return nil
	case p.Exact != "":
		return addToGroup(h.exact, p.Exact, cond, r.Value)
	case p.Prefix != "":
		key := strings.TrimRight(p.Prefix, "/")
		h.longestPrefix = max(h.longestPrefix, len(key))
		return addToGroup(h.prefix, key, cond, r.Value)
	}
	return fmt.Errorf("the route has no path")
}

func addToGroup[R any](groups map[string]*group[R], key string, cond conditions, value R) error {
	g := groups[key]
	if g == nil {
		g = &group[R]{}
		groups[key] = g
	}
	if !cond.empty() {
		g.conditional = append(g.conditional, conditionalRoute[R]{cond: cond, value: value})
		return nil
	}
	if g.hasPlain {
		return fmt.Errorf("path %q has two routes without method, header, cookie or query matchers", key)
	}
	g.plain, g.hasPlain = value, true
	return nil
}

// Lookup finds the route of a request. host must be normalised
// (NormalizeHost) and path normalised (NormalizePath). It returns the
// route's value and, for a regex route that asked for them, its
// submatches. When a domain matched but no route did, it returns the
// site's default. req may be nil (only routes without matchers besides
// the path match then). It fails with ErrNoDomain when no domain matched,
// and with ErrPathTooLong or ErrValueTooLong when a regex would read more
// than the table's bound.
func (t *Table[R]) Lookup(hostname, path string, req *Request) (value R, captures []string, err error) {
	h := t.host(hostname)
	if h == nil {
		return value, nil, ErrNoDomain
	}
	return h.lookup(path, req)
}

func (t *Table[R]) host(name string) *host[R] {
	if h := t.exact[name]; h != nil {
		return h
	}
	if i := strings.IndexByte(name, '.'); i > 0 {
		if h := t.wildcard[name[i:]]; h != nil {
			return h
		}
		if t.longestDeep > 0 {
			if h := t.deepHost(name[i:]); h != nil {
				return h
			}
		}
	}
	return t.catchAll
}

// deepHost finds the "**." domain of the longest suffix of a name, given
// from its first dot (".b.example.com" for a.b.example.com), trying the
// suffixes from the longest down; those longer than the longest "**."
// domain are not looked up. A suffix after an empty label matches none.
func (t *Table[R]) deepHost(suffix string) *host[R] {
	for {
		if len(suffix) <= t.longestDeep {
			if h := t.deep[suffix]; h != nil {
				return h
			}
		}
		i := strings.IndexByte(suffix[1:], '.')
		if i <= 0 {
			return nil
		}
		suffix = suffix[1+i:]
	}
}

func (h *host[R]) lookup(path string, req *Request) (R, []string, error) {
	if g := h.exact[path]; g != nil {
		if v, ok, err := g.pick(req); ok || err != nil {
			return v, nil, err
		}
	}
	if v, ok, err := h.lookupPrefix(path, req); ok || err != nil {
		return v, nil, err
	}
	if len(h.regex) > 0 && h.maxRegexInput > 0 && len(path) > h.maxRegexInput {
		return h.def, nil, ErrPathTooLong
	}
	for i := range h.regex {
		r := &h.regex[i]
		if ok, err := r.cond.match(req); !ok {
			if err != nil {
				return h.def, nil, err
			}
			continue
		}
		if !r.captures {
			if r.re.MatchString(path) {
				return r.value, nil, nil
			}
		} else if m := r.re.FindStringSubmatch(path); m != nil {
			return r.value, m, nil
		}
	}
	return h.def, nil, nil
}

// lookupPrefix finds the longest prefix route of path, trying the
// candidates from the longest down; those longer than the longest prefix
// of the host cannot match and are not looked up (hashing every one of
// them would cost the square of the path's length).
func (h *host[R]) lookupPrefix(path string, req *Request) (value R, ok bool, err error) {
	for candidate := strings.TrimSuffix(path, "/"); ; {
		if len(candidate) <= h.longestPrefix {
			if g := h.prefix[candidate]; g != nil {
				if v, ok, err := g.pick(req); ok || err != nil {
					return v, ok, err
				}
			}
		}
		if candidate == "" {
			return value, false, nil
		}
		candidate = candidate[:strings.LastIndexByte(candidate, '/')]
	}
}

func (g *group[R]) pick(req *Request) (value R, ok bool, err error) {
	for i := range g.conditional {
		if ok, err := g.conditional[i].cond.match(req); ok || err != nil {
			return g.conditional[i].value, ok, err
		}
	}
	return g.plain, g.hasPlain, nil
}
