// Package sourcerange is the source-range family: allowlist-source-range
// (and its older name whitelist-source-range) and denylist-source-range.
// The client address is the connection's, or the one a trusted proxy
// reports. An invalid list makes the object not served (fail closed).
package sourcerange

import (
	"fmt"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

func init() {
	registry.Register(&registry.Family{
		Name:          "source-range",
		Doc:           "Allow and deny lists of client addresses.",
		AccessControl: true,
		Keys: []registry.Key{
			{Name: "allowlist-source-range", Validate: validList, Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc: "Comma-separated CIDRs (IPv4, IPv6) that may use the paths; others get 403. At most 1024."},
			{Name: "whitelist-source-range", Validate: validList, Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc: "The older name of allowlist-source-range, used when that is absent."},
			{Name: "denylist-source-range", Validate: validList, Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc: "Comma-separated CIDRs refused with 403, checked before the allow list. At most 1024."},
		},
		Parse: parse,
	})
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	allowValue, ok := values["allowlist-source-range"]
	if !ok {
		allowValue = values["whitelist-source-range"]
	}
	allow, deny := split(allowValue), split(values["denylist-source-range"])
	if len(allow) == 0 && len(deny) == 0 {
		return nil
	}
	return func(s *core.Settings) {
		s.Policies.Allow, s.Policies.Deny = allow, deny
		s.Protected = true
	}
}

func split(v string) []string {
	var out []string
	for item := range strings.SplitSeq(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func validList(v string) error {
	items := split(v)
	if len(items) > config.MaxSourceRanges {
		return fmt.Errorf("%d entries, more than %d", len(items), config.MaxSourceRanges)
	}
	for i, item := range items {
		if _, err := config.ParsePrefix(item); err != nil {
			return fmt.Errorf("entry %d: %v", i+1, err)
		}
	}
	return nil
}
