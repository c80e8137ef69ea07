// Package canary is the canary family: canary, canary-weight,
// canary-weight-total, canary-by-header, canary-by-header-value,
// canary-by-header-pattern and canary-by-cookie, as ingress-nginx's canary
// releases. A canary object serves nothing of its own: each of its paths
// joins the main route with the same host, path type and path in its
// namespace (core does the joining), taking the requests its header, its
// cookie or its weight select, in that order.
package canary

import (
	"fmt"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

// maxWeight is the largest weight ramjetd takes for a weighted action.
const maxWeight = 1_000_000

// defaultTotal is the total weight when canary-weight-total is absent or
// below it (ingress-nginx's balancer ignores a smaller total).
const defaultTotal = 100

func init() {
	registry.Register(&registry.Family{
		Name: "canary",
		Doc:  "Canary releases: a second Ingress takes a share of the main Ingress's requests by header, cookie or weight.",
		Keys: []registry.Key{
			{Name: "canary", Validate: registry.Bool, Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "false",
				Doc: "Makes the Ingress a canary of the main Ingress that has the same host, path type and path in its namespace.",
				Differs: "The main Ingress must be in the canary's namespace (ingress-nginx joins across namespaces), and the canary joins the main route, not every route to the main Service. " +
					"A canary without a main route gets CanaryWithoutMain and is not served; so is one whose basic auth or source ranges differ from its main's (ingress-nginx ignores them and uses the main's), and one whose canary value is not a boolean or whose family is disabled (ingress-nginx would serve it as an ordinary Ingress). " +
					"A canary's spec.defaultBackend is not used (ingress-nginx joins it to the catch-all)."},
			{Name: "canary-weight", Validate: registry.Int(0, maxWeight), Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "0",
				Doc:     "Requests out of canary-weight-total sent to the canary, at random, when no header or cookie decided. A weight above the total counts as the total (every request goes to the canary, as in ingress-nginx), with a finding.",
				Differs: "The draw is made for each request: a client that cookie affinity keeps on one member of the main pool is not kept off the canary (ingress-nginx's affinity-canary-behavior: sticky keeps it on the side that served it first). A canary without balancing of its own takes its main's affinity, so it is sticky among the canary's members."},
			{Name: "canary-weight-total", Validate: registry.Int(1, maxWeight), Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "100",
				Doc: "The total canary-weight is out of; a total below 100 counts as 100, as in ingress-nginx's balancer."},
			{Name: "canary-by-header", Validate: validHeaderName, Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc: `Request header that selects the canary: "always" sends the request to the canary, "never" keeps it on the main route (unless canary-by-header-value or -pattern is set).`},
			{Name: "canary-by-header-value", Validate: validHeaderValue, Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc: "Requests whose canary-by-header equals this value (case-sensitive) go to the canary; other values fall through to the cookie and the weight."},
			{Name: "canary-by-header-pattern", Validate: validPattern, Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc:     "Requests whose canary-by-header matches this regular expression anywhere in the value go to the canary; ignored when canary-by-header-value is set.",
				Differs: "The expression is RE2 (no look-around or back-references), where ingress-nginx uses PCRE; an expression RE2 does not take is invalid."},
			{Name: "canary-by-cookie", Validate: validCookieName, Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc: `Cookie that selects the canary: "always" sends the request to the canary, "never" keeps it on the main route; checked after the header.`},
		},
		Parse: parse,
	})
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	if !registry.IsTrue(values["canary"]) {
		if others := registry.Present(values, "canary"); len(others) > 0 {
			ctx.Note(core.InvalidAnnotation, "%s: ignored, since the canary-* keys only apply to a canary (%scanary: \"true\")", strings.Join(others, ", "), registry.Prefix)
		}
		return nil
	}
	spec := &core.Canary{
		Header:        values["canary-by-header"],
		HeaderValue:   values["canary-by-header-value"],
		HeaderPattern: values["canary-by-header-pattern"],
		Cookie:        values["canary-by-cookie"],
		Total:         total(ctx, values["canary-weight-total"]),
	}
	if w, ok := values["canary-weight"]; ok {
		n, _ := registry.ParseInt(w, 0, maxWeight)
		spec.Weight = uint32(n)
		if spec.Weight > spec.Total {
			// ingress-nginx's balancer draws 1..total and compares it with
			// the weight: every request goes to the canary.
			ctx.Note(core.InvalidAnnotation, "%scanary-weight: %d is above the total of %d (canary-weight-total); it counts as the total, as in ingress-nginx's balancer: every request goes to the canary",
				registry.Prefix, n, spec.Total)
			spec.Weight = spec.Total
		}
	}
	if spec.Header == "" && (spec.HeaderValue != "" || spec.HeaderPattern != "") {
		ctx.Note(core.InvalidAnnotation, "%scanary-by-header-value and -pattern need %scanary-by-header, which names the header; they are ignored", registry.Prefix, registry.Prefix)
		spec.HeaderValue, spec.HeaderPattern = "", ""
	}
	if spec.HeaderValue != "" && spec.HeaderPattern != "" {
		ctx.Note(core.InvalidAnnotation, "%scanary-by-header-pattern is ignored: %scanary-by-header-value is set and comes first", registry.Prefix, registry.Prefix)
		spec.HeaderPattern = ""
	}
	return func(s *core.Settings) { s.Canary = spec }
}

// total reads canary-weight-total: absent or below 100 it is 100.
func total(ctx *registry.Context, v string) uint32 {
	if v == "" {
		return defaultTotal
	}
	n, _ := registry.ParseInt(v, 1, maxWeight)
	if n < defaultTotal {
		ctx.Invalid("canary-weight-total", "%d is below %d, which ingress-nginx's balancer uses instead; so does Ramjet (canary-weight counts out of %d)", n, defaultTotal, defaultTotal)
		return defaultTotal
	}
	return uint32(n)
}

func validHeaderName(v string) error {
	if config.ValidateHeaderName(v) != nil {
		return fmt.Errorf("%s is not a header name", core.Quote(v))
	}
	return nil
}

func validHeaderValue(v string) error {
	if v == "" || config.ValidateHeaderValue(v) != nil {
		return fmt.Errorf("%s is not a header value", core.Quote(v))
	}
	return nil
}

func validCookieName(v string) error {
	if config.ValidateCookieName(v) != nil {
		return fmt.Errorf("%s is not a cookie name", core.Quote(v))
	}
	return nil
}

// validPattern checks the pattern alone (so that it cannot close the group
// it is searched in) and as ramjetd will compile it.
func validPattern(v string) error {
	if _, err := config.CompileValueRegex(v); err != nil {
		return fmt.Errorf("%s is not a regular expression ramjetd takes: %v", core.Quote(v), err)
	}
	if _, err := config.CompileValueRegex(core.AnywhereRegex(v)); err != nil {
		return fmt.Errorf("%s is not a regular expression ramjetd takes: %v", core.Quote(v), err)
	}
	return nil
}
