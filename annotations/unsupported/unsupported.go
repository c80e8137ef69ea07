// Package unsupported is the family of access controls Ramjet does not
// provide: external authentication (auth-url, auth-signin), client
// certificate authentication (auth-tls-*), satisfy and ModSecurity. An
// object carrying any of them is not served: serving it without the control
// would expose a backend its owner meant to protect (fail closed).
package unsupported

import (
	"slices"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

func init() {
	registry.Register(&registry.Family{
		Name:          "unsupported-access",
		Doc:           "Access controls Ramjet does not provide; an object using them is not served.",
		AccessControl: true,
		Keys: []registry.Key{
			{Name: "auth-url", Risk: registry.RiskHigh, Scope: registry.ScopeIngress, Doc: "External authentication: not provided; the object is not served."},
			{Name: "auth-signin", Risk: registry.RiskHigh, Scope: registry.ScopeIngress, Doc: "External authentication sign-in: not provided; the object is not served."},
			{Name: "auth-tls-", Wildcard: true, Risk: registry.RiskHigh, Scope: registry.ScopeIngress, Doc: "Client certificate authentication (every auth-tls-* key): not provided; the object is not served."},
			{Name: "satisfy", Risk: registry.RiskLow, Scope: registry.ScopeIngress, Doc: "Combining access controls: not provided; the object is not served."},
			{Name: "enable-modsecurity", Risk: registry.RiskHigh, Scope: registry.ScopeIngress, Doc: "ModSecurity: not provided; the object is not served."},
			{Name: "enable-owasp-core-rules", Risk: registry.RiskHigh, Scope: registry.ScopeIngress, Doc: "ModSecurity's OWASP rules: not provided; the object is not served."},
			{Name: "modsecurity-", Wildcard: true, Risk: registry.RiskCritical, Scope: registry.ScopeIngress, Doc: "ModSecurity settings (every modsecurity-* key): not provided; the object is not served."},
		},
		Parse: parse,
	})
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, registry.Prefix+k)
	}
	slices.Sort(keys)
	ctx.Refuse(core.UnsupportedAccessControl,
		"%s asks for access control Ramjet does not provide; the object is not served, so that its backend is not exposed unprotected",
		strings.Join(keys, ", "))
	return nil
}
