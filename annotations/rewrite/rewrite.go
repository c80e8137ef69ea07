// Package rewrite is the rewrite family: rewrite-target, use-regex and
// app-root. A rewrite target, or use-regex, makes the object's paths
// regexes and, for the namespace that owns the host, switches the whole host
// to regex matching, as in ingress-nginx.
package rewrite

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

func init() {
	registry.Register(&registry.Family{
		Name: "rewrite",
		Doc:  "Path rewriting, regex paths and the application root.",
		Keys: []registry.Key{
			{Name: "rewrite-target", Validate: validateTarget, Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc: "Replaces the whole path sent to the member (the query string is kept); $1..$9 are the submatches of the path. Makes the paths regexes; a path equal to the target is neither rewritten nor, on its own, a reason for regexes (as in ingress-nginx).",
				Differs: "Only $1..$9 are replaced: a target with another $ (nginx variables such as $host or $request_uri) is invalid, as is one with ? or # (as in ingress-nginx since v1.12). " +
					"A target with . or .. segments (/../admin, also percent-encoded) is invalid, as such a path is in a rule: ingress-nginx sends it as written, and the member resolves it to a path the route does not serve. " +
					"The submatches are those of the route's own match, anchored at the start; nginx matches the path again, unanchored, which differs only for paths that match at several places."},
			{Name: "use-regex", Validate: registry.Bool, Risk: registry.RiskLow, Scope: registry.ScopeHost, Default: "false",
				Doc: "Makes the paths regexes (case-insensitive, anchored at the start), Exact ones included; the owning namespace switches the whole host.",
				Differs: "Regexes are RE2 (no lookaround or backreferences) and every alternative is anchored. A regex path holding a control character (a line break, a tab) is not served, as any other path (nginx would match it against the decoded path). Only the namespace that owns the host switches it to regex mode, " +
					"and there the paths of objects that did not ask for regexes are matched literally. " +
					`Exact paths are regexes too, as ingress-nginx writes every location of the host as ~* "^<path>" (so an Exact path also takes longer paths); ` +
					"ingress-nginx's admission webhook (strict-validate-path-type, on by default since v1.12) refuses Exact and Prefix paths holding characters other than letters, digits and . _ - /, where Ramjet serves them as regexes."},
			{Name: "app-root", Validate: validateAppRoot, Risk: registry.RiskMedium, Scope: registry.ScopeHost,
				Doc:     "Answers a request for exactly / with a 302 to this path (the query string is dropped), on every host the object owns; the oldest such object of the host wins.",
				Differs: "The value / is invalid: it would redirect / to itself forever, as it does in ingress-nginx."},
		},
		Parse: parse,
	})
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	regex := registry.IsTrue(values["use-regex"])
	target := strings.TrimSpace(values["rewrite-target"])
	appRoot := strings.TrimSpace(values["app-root"])
	return func(s *core.Settings) {
		// A rewrite-target makes the object's paths regexes too, except
		// where it equals the path: the input decides, knowing the paths.
		if regex {
			s.Regex = true
		}
		if target != "" {
			if s.Policies.Rewrite == nil {
				s.Policies.Rewrite = &config.Rewrite{}
			}
			s.Policies.Rewrite.Path = target
		}
		if appRoot != "" {
			s.AppRoot = appRoot
		}
	}
}

// validateTarget accepts what the data plane takes as a rewrite path, and
// refuses $ other than $1..$9: nginx would expand a variable there, ramjetd
// would send it literally.
func validateTarget(v string) error {
	v = strings.TrimSpace(v)
	switch {
	case !strings.HasPrefix(v, "/"):
		return fmt.Errorf("%s must start with /", core.Quote(v))
	case strings.ContainsAny(v, "?#"):
		return fmt.Errorf("%s must not hold '?' or '#' (the query string of the request is kept)", core.Quote(v))
	case strings.ContainsAny(v, " \t"):
		return fmt.Errorf("%s must not hold whitespace", core.Quote(v))
	}
	if strayDollar.MatchString(v) {
		return fmt.Errorf("%s: only $1..$9 (the submatches of the path) are replaced; nginx variables such as $host are not available", core.Quote(v))
	}
	if hasDotSegment(v) {
		return fmt.Errorf("%s must not hold . or .. segments (also percent-encoded): the member would resolve them to another path", core.Quote(v))
	}
	return nil
}

// hasDotSegment reports whether a path has a "." or ".." segment, written
// as such or percent-encoded ("%2e%2E"), as a route path may not.
func hasDotSegment(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if decoded, err := url.PathUnescape(seg); err == nil {
			seg = decoded
		}
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// strayDollar finds a $ that is not $1..$9.
var strayDollar = regexp.MustCompile(`\$([^1-9]|$)`)

func validateAppRoot(v string) error {
	v = strings.TrimSpace(v)
	u, err := url.ParseRequestURI(v)
	if err != nil || u.IsAbs() || u.Host != "" || !strings.HasPrefix(v, "/") || strings.HasPrefix(v, "//") {
		return fmt.Errorf("%s must be a path such as /app", core.Quote(v))
	}
	switch {
	case strings.ContainsAny(v, " \t"):
		return fmt.Errorf("%s must not hold whitespace", core.Quote(v))
	case u.Path == "/":
		return fmt.Errorf("%s would redirect / to itself; name the application's path, such as /app", core.Quote(v))
	}
	return nil
}
