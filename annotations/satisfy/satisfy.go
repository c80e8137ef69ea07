// Package satisfy is the satisfy family: how an object's access controls
// combine, as ingress-nginx's satisfy annotation and nginx's satisfy
// directive. all (the default) needs every control to pass; any lets a
// client through when its address is allowed (allowlist-source-range,
// denylist-source-range) or when it signs in (basic authentication).
package satisfy

import (
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

func init() {
	registry.Register(&registry.Family{
		Name: "satisfy",
		Doc:  "How the access controls of an object combine: all of them, or any.",
		// An object that asks for any must not be served with all when the
		// family is disabled, nor the reverse: either way it is refused.
		AccessControl: true,
		Keys: []registry.Key{
			{Name: "satisfy", Validate: registry.Trimmed(registry.OneOf(false, config.SatisfyAll, config.SatisfyAny)),
				Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: config.SatisfyAll,
				Doc: "all: a client must pass the source ranges, basic authentication and external authentication (auth-url); any: one suffices (an allowed address needs no " +
					"credentials, a refused one may sign in, and is answered 401 when it does not). The member never sees credentials.",
				Differs: "A value other than all or any (case matters, as in ingress-nginx) makes the object not served " +
					"(ingress-nginx falls back to all). With one control alone there is nothing to combine. " +
					"any with both basic authentication and auth-url makes the object not served: Ramjet combines the source ranges with one authentication."},
		},
		Parse: parse,
	})
}

func parse(_ *registry.Context, values map[string]string) core.Fragment {
	if strings.TrimSpace(values["satisfy"]) != config.SatisfyAny {
		return nil
	}
	return func(s *core.Settings) { s.Policies.Satisfy = config.SatisfyAny }
}
