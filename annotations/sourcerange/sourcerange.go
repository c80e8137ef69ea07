// Package sourcerange is the source-range family: allowlist-source-range
// (and its older name whitelist-source-range) and denylist-source-range.
// The client address is the connection's, or the one a trusted proxy
// reports. An invalid or empty list makes the object not served (fail
// closed).
package sourcerange

import (
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

// listDiffers is the Differs of both lists.
const listDiffers = "Every entry must parse and there are at most 1024: otherwise the object is not served " +
	"(ingress-nginx denies the paths with 503 when an entry does not parse; a refused object's paths answer 404). " +
	"Whitespace and line breaks around the entries are fine (a YAML block, one entry per line, each but the last ending in a comma); " +
	"entries separated by line breaks alone are invalid, as in ingress-nginx, which splits on commas only. " +
	"The object's spec.defaultBackend is not served, since requests that reach it would skip the list."

func init() {
	registry.Register(&registry.Family{
		Name:          "source-range",
		Doc:           "Allow and deny lists of client addresses.",
		AccessControl: true,
		Keys: []registry.Key{
			{Name: "allowlist-source-range", Validate: validList, List: true, Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc:     "Comma-separated CIDRs or addresses (IPv4, IPv6) that may use the paths; others get 403. At most 1024. Empty: the object is not served.",
				Differs: listDiffers},
			{Name: "whitelist-source-range", Validate: validList, List: true, Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc:     "The older name of allowlist-source-range, used when that is absent or empty.",
				Differs: listDiffers + " An invalid value makes the object not served even when allowlist-source-range is set (ingress-nginx does not read it then)."},
			{Name: "denylist-source-range", Validate: validList, List: true, Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc:     "Comma-separated CIDRs or addresses refused with 403, checked before the allow list. At most 1024. Empty: the object is not served.",
				Differs: listDiffers},
		},
		Parse: parse,
	})
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	// The older name counts only when the new one is absent or empty, as
	// ingress-nginx reads annotation aliases (an invalid one has refused
	// the object already).
	allowKey := "allowlist-source-range"
	if strings.TrimSpace(values[allowKey]) == "" {
		if _, ok := values["whitelist-source-range"]; ok || ctx.Rejected("whitelist-source-range") {
			allowKey = "whitelist-source-range"
		}
	}
	allowValue, hasAllow := values[allowKey]
	denyValue, hasDeny := values["denylist-source-range"]
	allow, deny := registry.SplitList(allowValue), registry.SplitList(denyValue)
	for _, empty := range []struct {
		key     string
		present bool
		list    []string
	}{{allowKey, hasAllow, allow}, {"denylist-source-range", hasDeny, deny}} {
		if empty.present && len(empty.list) == 0 {
			// ingress-nginx denies such paths (503) rather than serve them
			// to everyone.
			ctx.Invalid(empty.key, "the list is empty; write at least one CIDR or address")
		}
	}
	if len(allow) == 0 && len(deny) == 0 {
		return nil
	}
	return func(s *core.Settings) {
		s.Policies.Allow, s.Policies.Deny = allow, deny
		s.Protected = true
	}
}

// validList checks a comma-separated list of CIDRs and addresses.
func validList(v string) error { return config.CheckRanges(registry.SplitList(v)) }
