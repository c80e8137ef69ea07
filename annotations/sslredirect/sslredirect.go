// Package sslredirect is the ssl-redirect family: ssl-redirect,
// force-ssl-redirect, preserve-trailing-slash and use-port-in-redirects.
// Plain-HTTP requests to a TLS host get a 308 to HTTPS unless the object
// turns that off; force-ssl-redirect redirects on hosts without TLS too
// (TLS ended in front of Ramjet). Routes that serve ACME HTTP-01 challenges
// are never redirected. The redirect's target is https://host/path?query
// as the client sent it: the two keys about the target are honoured only
// where they ask for what ramjetd does, and reported otherwise.
package sslredirect

import (
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

func init() {
	registry.Register(&registry.Family{
		Name: "ssl-redirect",
		Doc:  "The redirect of plain-HTTP requests to HTTPS (308).",
		Keys: []registry.Key{
			{Name: "ssl-redirect", Validate: registry.Bool, Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "true",
				Doc:     "true: plain-HTTP requests to the object's paths on a TLS host get a 308 to https://host/path?query; false turns that off for the object's paths. Paths under /.well-known/acme-challenge/ are never redirected.",
				Differs: "ingress-nginx also redirects a host without a TLS entry of its own when a wildcard TLS host covers it; Ramjet redirects only hosts listed under tls. The status is always 308 (ingress-nginx's http-redirect-code ConfigMap key has no counterpart), and the target keeps a trailing slash (see preserve-trailing-slash)."},
			{Name: "force-ssl-redirect", Validate: registry.Bool, Risk: registry.RiskMedium, Scope: registry.ScopeIngress, Default: "false",
				Doc:     "true: plain-HTTP requests to the object's paths get the 308 to HTTPS even on hosts without TLS (TLS ended by a load balancer in front); wins over ssl-redirect: false. X-Forwarded-Proto counts only from ramjetd's trusted_proxies.",
				Differs: "ingress-nginx believes X-Forwarded-Proto with its use-forwarded-headers ConfigMap key, Ramjet from the addresses in ramjetd's trusted_proxies: without them, requests a load balancer forwards over plain HTTP are redirected again and again. The target keeps a trailing slash (see preserve-trailing-slash)."},
			{Name: "preserve-trailing-slash", Validate: registry.Bool, Risk: registry.RiskMedium, Scope: registry.ScopeIngress, Default: "false",
				Doc:     "The HTTPS redirect always keeps the path as the client sent it, trailing slash included: the behaviour of true. false cannot be honoured and gets a finding.",
				Differs: "ingress-nginx, without this key or with false, removes one trailing slash from the HTTPS redirect's target (http://h/a/ goes to https://h/a); Ramjet never does, so such requests reach the backend with their slash."},
			{Name: "use-port-in-redirects", Validate: registry.Bool, Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "false",
				Doc:     "The HTTPS redirect never names a port (https://host/path, port 443): the behaviour of false. true cannot be honoured and gets a finding.",
				Differs: "ingress-nginx with true redirects to https://host:PORT/path, PORT being its HTTPS port, and makes nginx's own absolute redirects name the port; Ramjet's redirect always goes to port 443."},
		},
		Parse: parse,
	})
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	if v, ok := values["preserve-trailing-slash"]; ok && !registry.IsTrue(v) {
		ctx.Note(core.UnknownAnnotation, "%spreserve-trailing-slash: %s has no counterpart in Ramjet: the HTTPS redirect keeps the path as sent, trailing slash included; it is ignored", registry.Prefix, core.Quote(v))
	}
	if v, ok := values["use-port-in-redirects"]; ok && registry.IsTrue(v) {
		ctx.Note(core.UnknownAnnotation, "%suse-port-in-redirects: %s has no counterpart in Ramjet: the HTTPS redirect names no port (https://host/path, port 443); it is ignored", registry.Prefix, core.Quote(v))
	}
	force := registry.IsTrue(values["force-ssl-redirect"])
	var ssl *bool
	if v, ok := values["ssl-redirect"]; ok {
		on := registry.IsTrue(v)
		if !on && force {
			ctx.Invalid("ssl-redirect", "%s has no effect: force-ssl-redirect is true and wins, as in ingress-nginx", core.Quote(v))
		}
		ssl = &on
	}
	if ssl == nil && !force {
		return nil
	}
	return func(s *core.Settings) {
		s.SSLRedirect, s.ForceSSLRedirect = ssl, force
	}
}
