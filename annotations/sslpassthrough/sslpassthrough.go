// Package sslpassthrough is the ssl-passthrough family: the TLS
// connections of an object's hosts go to the Service undecrypted. It is
// host-wide and served only when the controller runs with
// --enable-ssl-passthrough, as in ingress-nginx; the Ingress input drops
// it with a finding otherwise, and core decides, per host, whether the
// owning namespace asked for it and which backend takes the connections.
package sslpassthrough

import (
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

// Key is the annotation key of the family, without registry.Prefix.
const Key = "ssl-passthrough"

func init() {
	registry.Register(&registry.Family{
		Name: "ssl-passthrough",
		Doc:  "TLS connections handed to the Service undecrypted, chosen by the server name of their ClientHello.",
		Keys: []registry.Key{
			{Name: Key, Validate: registry.Bool, Risk: registry.RiskLow, Scope: registry.ScopeHost, Default: "false",
				Doc: "\"true\" splices the TLS connections whose ClientHello names one of the object's hosts (SNI) to the members of the host's path / " +
					"(else of the default backend of the object that created the host), byte for byte: the member's own certificate is served, client certificates reach it, and no other annotation applies to those connections. " +
					"Only with the controller's --enable-ssl-passthrough (chart value ingressController.enableSSLPassthrough); without it the key is ignored with a finding and TLS is terminated. " +
					"Host-wide: an object of the namespace that owns the host decides. Connections without a server name, or whose ClientHello cannot be read, are terminated as usual; the plain-HTTP rules of the host are served as usual. " +
					"Connections are balanced over the Service's ready endpoints (the pool's balancing; hash balancing hashes the client address), the failed connects retried on other members, and closed after 1h with nothing sent either way.",
				Differs: "ingress-nginx sends passthrough connections to the Service's ClusterIP (kube-proxy chooses the pod); Ramjet balances them over the ready endpoints itself, as every other backend, and follows endpoint changes without a reload. " +
					"A wildcard host (*.example.com) splices the names it covers, as routing does; ingress-nginx compares the server name with the host literally, so its wildcard hosts are never spliced. " +
					"ingress-nginx reads only the first packet for the ClientHello and never times a spliced connection out; Ramjet reassembles a ClientHello over several records (up to 64 KiB, within the handshake timeout) and closes a connection silent for 1h, and passes a half-close (FIN) on instead of closing both sides. " +
					"ingress-nginx also proxies the plain-HTTP requests for the path / Service over HTTPS (without verification); Ramjet keeps the object's backend-protocol for them (backend-protocol: HTTPS with proxy-ssl-* gives the same). " +
					"Only the owning namespace switches a host (ingress-nginx: any object with a rule for it). The catch-all host (rules without a host) is never spliced (a finding says so)."},
		},
		Parse: parse,
	})
}

func parse(_ *registry.Context, values map[string]string) core.Fragment {
	if !registry.IsTrue(values[Key]) {
		return nil
	}
	return func(s *core.Settings) { s.SSLPassthrough = true }
}
