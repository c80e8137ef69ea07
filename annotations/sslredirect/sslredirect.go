// Package sslredirect is the ssl-redirect family: ssl-redirect,
// force-ssl-redirect, preserve-trailing-slash and use-port-in-redirects.
// Plain-HTTP requests to a TLS host get a 308 to HTTPS unless the object
// turns that off; force-ssl-redirect redirects on hosts without TLS too
// (TLS ended in front of Ramjet). Routes that serve ACME HTTP-01 challenges
// are never redirected. The redirect's target is https://host/path?query
// as the client sent it, less one trailing slash unless
// preserve-trailing-slash is true, with the port 443 written after the
// host when use-port-in-redirects is true, as ingress-nginx builds it.
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
				Differs: "ingress-nginx also redirects a host of an object without a tls section when another object's wildcard TLS host covers it; Ramjet redirects only the TLS hosts of the object: those its tls section lists and, when it has one, its other rule hosts (as ingress-nginx). The status is always 308 (ingress-nginx's http-redirect-code ConfigMap key has no counterpart), and the target drops one trailing slash unless preserve-trailing-slash is true, as ingress-nginx's."},
			{Name: "force-ssl-redirect", Validate: registry.Bool, Risk: registry.RiskMedium, Scope: registry.ScopeIngress, Default: "false",
				Doc:     "true: plain-HTTP requests to the object's paths get the 308 to HTTPS even on hosts without TLS (TLS ended by a load balancer in front); wins over ssl-redirect: false. X-Forwarded-Proto counts only from ramjetd's trusted_proxies.",
				Differs: "ingress-nginx believes X-Forwarded-Proto with its use-forwarded-headers ConfigMap key, Ramjet from the addresses in ramjetd's trusted_proxies: without them, requests a load balancer forwards over plain HTTP are redirected again and again."},
			{Name: "preserve-trailing-slash", Validate: registry.Bool, Risk: registry.RiskMedium, Scope: registry.ScopeIngress, Default: "false",
				Doc: "true: the HTTPS redirect keeps the path and query as the client sent them; false (the default) removes one slash that ends them, as ingress-nginx does (http://h/a/ goes to https://h/a, http://h/ to https://h; http://h/a/?q=1 keeps its slash)."},
			{Name: "use-port-in-redirects", Validate: registry.Bool, Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "false",
				Doc:     "true: the HTTPS redirect names the port, https://host:443/path; false (the default) names none.",
				Differs: "The port is always 443, ingress-nginx's default HTTPS port: an ingress-nginx started with another --https-port names that one. nginx's own redirects that the key also changes in ingress-nginx (port_in_redirect) are not made by ramjetd: the only redirect ramjetd builds from the request's host is the HTTPS one."},
		},
		Parse: parse,
	})
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	preserve := registry.IsTrue(values["preserve-trailing-slash"])
	port := registry.IsTrue(values["use-port-in-redirects"])
	force := registry.IsTrue(values["force-ssl-redirect"])
	var ssl *bool
	if v, ok := values["ssl-redirect"]; ok {
		on := registry.IsTrue(v)
		if !on && force {
			ctx.Invalid("ssl-redirect", "%s has no effect: force-ssl-redirect is true and wins, as in ingress-nginx", core.Quote(v))
		}
		ssl = &on
	}
	if ssl == nil && !force && !preserve && !port {
		return nil
	}
	return func(s *core.Settings) {
		s.SSLRedirect, s.ForceSSLRedirect = ssl, force
		s.PreserveTrailingSlash, s.PortInRedirects = preserve, port
	}
}
