// Package rewrite is the rewrite family: rewrite-target, use-regex and
// app-root. A rewrite target, or use-regex, makes the object's paths
// regexes and, for the namespace that owns the host, switches the whole host
// to regex matching, as in ingress-nginx.
package rewrite

import (
	"fmt"
	"net/url"
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
				Doc: "Replaces the whole path sent to the member (the query string is kept); $1..$9 are the submatches of the path. Makes the paths regexes."},
			{Name: "use-regex", Validate: validateBool, Risk: registry.RiskLow, Scope: registry.ScopeHost, Default: "false",
				Doc: "Makes the paths regexes (case-insensitive, anchored at the start); the owning namespace switches the whole host."},
			{Name: "app-root", Validate: validateAppRoot, Risk: registry.RiskMedium, Scope: registry.ScopeHost,
				Doc: "Answers a request for / with a 302 to this path, on every host of the object."},
		},
		Parse: parse,
	})
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	var regex bool
	if v, ok := values["use-regex"]; ok {
		regex = v == "true"
	}
	target := values["rewrite-target"]
	appRoot := values["app-root"]
	return func(s *core.Settings) {
		if regex || target != "" {
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

func validateBool(v string) error {
	if v != "true" && v != "false" {
		return fmt.Errorf("%s is not true or false", core.Quote(v))
	}
	return nil
}

func validateTarget(v string) error {
	switch {
	case !strings.HasPrefix(v, "/"):
		return fmt.Errorf("%s must start with /", core.Quote(v))
	case strings.ContainsAny(v, "?#"):
		return fmt.Errorf("%s must not hold '?' or '#' (the query string of the request is kept)", core.Quote(v))
	case strings.ContainsAny(v, " \t"):
		return fmt.Errorf("%s must not hold whitespace", core.Quote(v))
	}
	return nil
}

func validateAppRoot(v string) error {
	u, err := url.ParseRequestURI(v)
	if err != nil || u.IsAbs() || u.Host != "" || !strings.HasPrefix(v, "/") || strings.HasPrefix(v, "//") {
		return fmt.Errorf("%s must be a path such as /app", core.Quote(v))
	}
	if strings.ContainsAny(v, " \t") {
		return fmt.Errorf("%s must not hold whitespace", core.Quote(v))
	}
	return nil
}
