// Package unsupported is the family of access controls Ramjet does not
// provide: ModSecurity. An
// object carrying any of them is not served: serving it without the control
// would expose a backend its owner meant to protect (fail closed).
package unsupported

import (
	"maps"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

// refusedDiffers is the Differs of every refusing key.
const refusedDiffers = "ingress-nginx provides it; Ramjet does not, and does not serve the object (UnsupportedAccessControl) " +
	"rather than serve it unprotected. The object's hosts and paths stay claimed and answer 404."

func init() {
	registry.Register(&registry.Family{
		Name:          "unsupported-access",
		Doc:           "Access controls Ramjet does not provide; an object using them is not served.",
		AccessControl: true,
		Keys: []registry.Key{
			refused("enable-modsecurity", false, registry.RiskLow, "ModSecurity: not provided; the object is not served. false, which asks for nothing, is accepted."),
			refused("enable-owasp-core-rules", false, registry.RiskLow, "ModSecurity's OWASP core rules: not provided; the object is not served. false, which asks for nothing, is accepted."),
			{Name: "modsecurity-", Wildcard: true, Validate: registry.Any, MultiLine: true, Risk: registry.RiskCritical, Scope: registry.ScopeIngress,
				Doc:     "ModSecurity settings (every modsecurity-* key, modsecurity-snippet included, which may span lines): not provided; the object is not served.",
				Differs: refusedDiffers},
		},
		Parse: parse,
	})
}

func refused(name string, wildcard bool, risk registry.Risk, doc string) registry.Key {
	return registry.Key{Name: name, Wildcard: wildcard, Validate: registry.Any, Risk: risk, Scope: registry.ScopeIngress,
		Doc: doc, Differs: refusedDiffers}
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	asked := maps.Clone(values)
	maps.DeleteFunc(asked, asksForNothing)
	keys := registry.Present(asked)
	if len(keys) == 0 {
		return nil
	}
	verb := "asks"
	if len(keys) > 1 {
		verb = "ask"
	}
	ctx.Refuse(core.UnsupportedAccessControl,
		"%s %s for access control Ramjet does not provide; the object is not served, so that its backend is not exposed unprotected",
		strings.Join(keys, ", "), verb)
	return nil
}

// asksForNothing reports the values that ask for no control Ramjet lacks:
// ModSecurity turned off (set to opt out of a global setting).
func asksForNothing(key, value string) bool {
	switch key {
	case "enable-modsecurity", "enable-owasp-core-rules":
		on, err := registry.ParseBool(value)
		return err == nil && !on
	}
	return false
}
