// Package serviceupstream is the service-upstream family: a pool whose one
// member is the Service's ClusterIP and port instead of its endpoints, as
// ingress-nginx's service-upstream. kube-proxy then picks a pod for each
// connection; ramjetd neither balances nor retries on another member.
package serviceupstream

import (
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

const key = "service-upstream"

func init() {
	registry.Register(&registry.Family{
		Name: "service-upstream",
		Doc:  "Proxy to the Service's ClusterIP instead of its endpoints.",
		Keys: []registry.Key{
			{Name: key, Validate: registry.Bool, Risk: registry.RiskLow, Scope: registry.ScopeBackend, Default: "false",
				Doc: "true: the pool has one member, the Service's ClusterIP and port, and kube-proxy picks a pod for each connection. " +
					"ramjetd then does no balancing (load-balance, upstream-hash-by and affinity have no effect: a keep-alive connection stays on one pod) " +
					"and retries nothing (a retry goes to another member, and there is none). A Service without a ClusterIP (headless) answers 503.",
				Differs: "ingress-nginx takes the setting from the oldest Ingress using the Service port, for every Ingress using it; " +
					"in Ramjet it applies to the paths of the object that sets it, which get a pool of their own."},
		},
		Parse: parse,
	})
}

func parse(_ *registry.Context, values map[string]string) core.Fragment {
	if !registry.IsTrue(values[key]) {
		return nil
	}
	return func(s *core.Settings) { s.Pool.ServiceUpstream = true }
}
