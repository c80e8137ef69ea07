// Package accesslog is the access-log family: enable-access-log. With
// "false" the object's requests are left out of ramjetd's access log
// (server.access_log), as ingress-nginx's access_log off in the object's
// locations.
package accesslog

import (
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

const key = "enable-access-log"

func init() {
	registry.Register(&registry.Family{
		Name: "access-log",
		Doc:  "Leaving an object's requests out of the access log.",
		Keys: []registry.Key{
			{Name: key, Validate: registry.Bool, Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "true",
				Doc: `"false": the requests of the object's paths get no access log line; true (the default) logs them when ramjetd's server.access_log is on (the chart's server.access_log, off by default).`,
				Differs: "true cannot turn the access log on where server.access_log is off: it is a server-wide setting of ramjetd, where ingress-nginx logs every request by default. " +
					"The request metrics still count the object's requests, as ingress-nginx's do."},
		},
		Parse: parse,
	})
}

func parse(_ *registry.Context, values map[string]string) core.Fragment {
	v, ok := values[key]
	if !ok || registry.IsTrue(v) {
		return nil
	}
	return func(s *core.Settings) { s.NoAccessLog = true }
}
