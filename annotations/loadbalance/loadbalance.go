// Package loadbalance is the load-balance family: how the pools of the
// object's paths spread requests when neither cookie affinity nor
// upstream-hash-by is set (both take precedence, as in ingress-nginx).
// round_robin is the default; ewma, which ramjetd does not have, is served
// as least connections with a finding.
package loadbalance

import (
	"fmt"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

func init() {
	registry.Register(&registry.Family{
		Name: "load-balance",
		Doc:  "The balancing algorithm of the pools: round robin, or least connections for ewma.",
		Keys: []registry.Key{
			{Name: "load-balance", Validate: validAlgorithm, Risk: registry.RiskLow, Scope: registry.ScopeBackend, Default: "round_robin",
				Doc: "round_robin (rotation in proportion to weights) or ewma, served as least_conn (the member with the fewest requests in flight), with a finding. " +
					"Ignored when affinity: cookie or upstream-hash-by is set.",
				Differs: "ewma (peak EWMA of response times) is served as least connections. " +
					"ingress-nginx balances a Service port as the oldest Ingress using it says, for every Ingress; Ramjet gives each settings combination a pool of its own. " +
					"An invalid value is ignored with a finding, where ingress-nginx rejects the Ingress."},
		},
		Parse: parse,
	})
}

// winners are the keys that take precedence over load-balance, strongest
// first, as findings name them (affinity has the one value cookie).
var winners = []struct{ key, shown string }{{"affinity", "affinity: cookie"}, {"upstream-hash-by", "upstream-hash-by"}}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	for _, w := range winners {
		if _, ok := ctx.Value(w.key); ok {
			ctx.Invalid("load-balance", "%s%s is set and takes precedence, as in ingress-nginx", registry.Prefix, w.shown)
			return nil
		}
	}
	if strings.TrimSpace(values["load-balance"]) != "ewma" {
		// round_robin is the default: the pool stays the one of the
		// objects that do not set load-balance.
		return nil
	}
	ctx.Note(core.InvalidAnnotation, "%sload-balance: ewma is served as least_conn (the member with the fewest requests in flight): ramjetd has no EWMA balancer", registry.Prefix)
	return func(s *core.Settings) { s.Pool.Balance = config.BalanceLeastConn }
}

// internal are the other values ingress-nginx takes: the names of its Lua
// balancers, which the other annotations choose.
var internal = map[string]string{
	"chash":             "upstream-hash-by",
	"chashsubset":       "upstream-hash-by",
	"sticky_balanced":   "affinity: cookie",
	"sticky_persistent": "affinity: cookie",
}

func validAlgorithm(v string) error {
	t := strings.TrimSpace(v)
	switch {
	case t == "round_robin" || t == "ewma":
		return nil
	case internal[t] != "":
		return fmt.Errorf("%s is ingress-nginx's balancer for %s%s; set that annotation instead (load-balance takes round_robin or ewma)", core.Quote(v), registry.Prefix, internal[t])
	case strings.EqualFold(t, "round_robin") || strings.EqualFold(t, "ewma"):
		return fmt.Errorf("%s is not round_robin or ewma: the values are lower case, as in ingress-nginx", core.Quote(v))
	}
	return fmt.Errorf("%s is not round_robin or ewma", core.Quote(v))
}
