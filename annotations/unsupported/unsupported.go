// Package unsupported is the family of access controls Ramjet does not
// provide: external authentication (auth-url, auth-signin) and
// ModSecurity. An
// object carrying any of them is not served: serving it without the control
// would expose a backend its owner meant to protect (fail closed).
//
// The settings of external authentication (auth-method,
// auth-response-headers, ...) are keys of the family too, marked Ignored:
// without auth-url they configure nothing, and with it the object is not
// served anyway, so they only get a finding that says so. Like every key of
// an access-control family, they make the object not served when the family
// is disabled.
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

// externalAuthSetting is what happens instead of an external
// authentication setting.
const externalAuthSetting = "it only configures external authentication (auth-url), which Ramjet does not provide: an object with auth-url is not served"

func init() {
	registry.Register(&registry.Family{
		Name:          "unsupported-access",
		Doc:           "Access controls Ramjet does not provide; an object using them is not served.",
		AccessControl: true,
		Keys: []registry.Key{
			refused("auth-url", false, registry.RiskHigh, "External authentication (a subrequest to this URL decides): not provided; the object is not served."),
			refused("auth-signin", false, registry.RiskHigh, "The sign-in page of external authentication: not provided; the object is not served."),
			refused("enable-modsecurity", false, registry.RiskLow, "ModSecurity: not provided; the object is not served. false, which asks for nothing, is accepted."),
			refused("enable-owasp-core-rules", false, registry.RiskLow, "ModSecurity's OWASP core rules: not provided; the object is not served. false, which asks for nothing, is accepted."),
			{Name: "modsecurity-", Wildcard: true, Validate: registry.Any, MultiLine: true, Risk: registry.RiskCritical, Scope: registry.ScopeIngress,
				Doc:     "ModSecurity settings (every modsecurity-* key, modsecurity-snippet included, which may span lines): not provided; the object is not served.",
				Differs: refusedDiffers},
			setting("auth-method", false, registry.RiskLow, "", "The HTTP method of the subrequest to auth-url."),
			setting("auth-response-headers", false, registry.RiskMedium, "", "Headers of the auth-url answer passed on to the member."),
			setting("auth-proxy-set-headers", false, registry.RiskMedium, "", "A ConfigMap of headers sent to auth-url."),
			setting("auth-request-redirect", false, registry.RiskMedium, "", "The X-Auth-Request-Redirect header sent to auth-url."),
			setting("auth-cache-key", false, registry.RiskMedium, "", "The key under which auth-url answers are cached."),
			setting("auth-cache-duration", false, registry.RiskMedium, "200 202 401 5m", "How long auth-url answers are cached, by status."),
			setting("auth-always-set-cookie", false, registry.RiskLow, "false", "Passes the cookies of the auth-url answer to the client on failed requests too."),
			setting("auth-signin-redirect-param", false, registry.RiskMedium, "rd", "The query parameter of auth-signin that carries the original URL."),
			setting("auth-keepalive", true, registry.RiskLow, "", "Every auth-keepalive* key: keep-alive connections to auth-url."),
		},
		Parse: parse,
	})
}

func refused(name string, wildcard bool, risk registry.Risk, doc string) registry.Key {
	return registry.Key{Name: name, Wildcard: wildcard, Validate: registry.Any, Risk: risk, Scope: registry.ScopeIngress,
		Doc: doc, Differs: refusedDiffers}
}

// setting is an Ignored key of external authentication; doc says what it
// does in ingress-nginx.
func setting(name string, wildcard bool, risk registry.Risk, def, doc string) registry.Key {
	k := registry.IgnoredKey(name, risk, registry.ScopeIngress, def, doc, externalAuthSetting)
	k.Wildcard = wildcard
	return k
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
