// Package wwwredirect is the from-to-www-redirect family: the www. twin of
// a host (www.example.com for example.com, example.com for
// www.example.com) answers every request with a redirect to the host.
package wwwredirect

import (
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

// Key is the annotation key, without the prefix.
const Key = "from-to-www-redirect"

func init() {
	registry.Register(&registry.Family{
		Name: "www-redirect",
		Doc:  "The redirect of a host's www. twin to the host.",
		Keys: []registry.Key{
			{Name: Key, Validate: registry.Bool, Risk: registry.RiskLow, Scope: registry.ScopeHost, Default: "false",
				Doc: "true: requests for the www. twin of each host of the object (www.example.com for example.com, example.com for www.example.com) get a 308 to the host: the same scheme, the port of the listener they came in on (left out when it is the scheme's default), the path and query as sent less one trailing slash (/shop/ goes to /shop, / stays), as ingress-nginx's redirect server answers. " +
					"Served over plain HTTP and HTTPS, with the host's certificate when it covers the twin, else the default certificate (a finding says so). " +
					"Host-wide: an object of the namespace that owns the host asks for it. Skipped with a finding when the twin is a host of any object, an alias, or falls under another namespace's wildcard host; ignored for wildcard hosts and the catch-all.",
				Differs: "The status is always 308 (ingress-nginx's http-redirect-code ConfigMap key has no counterpart). " +
					"ingress-nginx always writes the port (http://example.com:80/); Ramjet leaves a scheme's default port out, which names the same address, and takes the scheme and port from X-Forwarded-Proto only from ramjetd's trusted_proxies (then without a port), where ingress-nginx uses X-Forwarded-Proto and X-Forwarded-Port with use-forwarded-headers. " +
					"Only the owning namespace switches a host (ingress-nginx: any object with a path on it), and a twin under another namespace's wildcard host, or taken by an alias, is not redirected (nginx would let the first server block win)."},
		},
		Parse: parse,
	})
}

func parse(_ *registry.Context, values map[string]string) core.Fragment {
	if !registry.IsTrue(values[Key]) {
		return nil
	}
	return func(s *core.Settings) { s.WWWRedirect = true }
}
