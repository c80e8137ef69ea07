// Package rewrite is the rewrite family: rewrite-target (with
// x-forwarded-prefix), use-regex and app-root. A rewrite target, or use-regex, makes the object's paths
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
			{Name: "x-forwarded-prefix", Validate: validateForwardedPrefix, Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc:     "With a rewrite-target that rewrites the path, sends X-Forwarded-Prefix with this value to the member in place of the client's; $1..$9 are the submatches of the path, as in the target. Paths that are not rewritten (no rewrite-target, or a target equal to the path) get none of their own, as in ingress-nginx: the client's passes.",
				Differs: "Only $1..$9 are replaced: a value with another $ (nginx variables such as $host) is invalid. A value holding a submatch the path does not have sends no header instead of an empty one (nginx sends none either) but then lets the client's through."},
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
	prefix := strings.TrimSpace(values["x-forwarded-prefix"])
	if prefix != "" && target == "" {
		ctx.Note(core.UnknownAnnotation, "%sx-forwarded-prefix: %s has no effect without a (valid) rewrite-target: the header goes only with a rewritten path, as in ingress-nginx", registry.Prefix, core.Quote(prefix))
		prefix = ""
	}
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
			s.Policies.Rewrite.ForwardedPrefix = prefix
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

// validateForwardedPrefix accepts ingress-nginx's characters for the
// header (letters, digits, - . _ ~ / : and $1..$9), refusing other $
// as a target does.
func validateForwardedPrefix(v string) error {
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return fmt.Errorf("must not be empty")
	case !forwardedPrefixChars.MatchString(v):
		return fmt.Errorf("%s may hold only letters, digits, - . _ ~ / : and $1..$9", core.Quote(v))
	case strayDollar.MatchString(v):
		return fmt.Errorf("%s: only $1..$9 (the submatches of the path) are replaced; nginx variables such as $host are not available", core.Quote(v))
	}
	return nil
}

// forwardedPrefixChars is ingress-nginx's RegexPathWithCapture.
var forwardedPrefixChars = regexp.MustCompile(`^[-._~a-zA-Z0-9/:$]*$`)

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
