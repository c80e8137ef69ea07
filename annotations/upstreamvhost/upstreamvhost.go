// Package upstreamvhost is the upstream-vhost family: the Host header sent
// to the members instead of the client's (the route's rewrite.host). It
// shares the route's rewrite with rewrite-target, which sets the path.
package upstreamvhost

import (
	"fmt"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

const key = "upstream-vhost"

func init() {
	registry.Register(&registry.Family{
		Name: "upstream-vhost",
		Doc:  "The Host header sent to the members.",
		Keys: []registry.Key{
			{Name: key, Validate: validate, Risk: registry.RiskLow, Scope: registry.ScopeIngress,
				Doc: "Replaces the Host header sent to the members: a DNS name or an IP address (IPv6 in brackets), with an optional port. " +
					"X-Forwarded-Host keeps the client's Host.",
				Differs: "nginx variables ($service_name, $namespace, ...) are not interpolated: a value holding $ is InvalidAnnotation and the client's Host is sent " +
					"(ingress-nginx interpolates them, and rejects the whole Ingress for a value its validator refuses)."},
		},
		Parse: parse,
	})
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	host := strings.TrimSpace(values[key])
	return func(s *core.Settings) {
		if s.Policies.Rewrite == nil {
			s.Policies.Rewrite = &config.Rewrite{}
		}
		s.Policies.Rewrite.Host = host
	}
}

// validate accepts what the data plane accepts as rewrite.host: a DNS
// name (no wildcard), an IPv4 address or a bracketed IPv6 address without
// zone, each with an optional port 1..65535.
func validate(v string) error {
	hp := strings.TrimSpace(v)
	if strings.Contains(hp, "$") {
		return fmt.Errorf("%s holds a $: nginx variables such as $service_name are not interpolated; write the host name itself", core.Quote(v))
	}
	return config.CheckHostPort(hp)
}
