// Package ignored is the family of ingress-nginx annotations Ramjet has no
// counterpart for and that are not access controls: tracing, TLS tuning,
// FastCGI and the like. Each key says what happens instead, so an object
// carrying one gets an UnknownAnnotation finding that explains the
// difference (for instance: no tracing spans are produced) rather than
// "not an annotation Ramjet knows". The object is served as if the key were
// absent. Access controls Ramjet does not provide are not here: they make
// the object not served (annotations/snippets, annotations/extauth).
package ignored

import (
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

const (
	noTracing = "no tracing spans are produced; trace context headers reach the member unchanged"
	noFastCGI = "FastCGI backends are not provided"
)

func init() {
	registry.Register(&registry.Family{
		Name: "ignored",
		Doc:  "ingress-nginx annotations Ramjet has no counterpart for; each is reported (UnknownAnnotation) with what happens instead.",
		Keys: []registry.Key{
			// TLS.
			ignored("ssl-ciphers", registry.RiskLow, registry.ScopeHost, "",
				"the TLS cipher suites of the object's hosts", "TLS versions and cipher suites are ramjetd's own (TLS 1.2 and later, Go's default suites) and cannot be changed per host"),
			ignored("ssl-prefer-server-ciphers", registry.RiskLow, registry.ScopeHost, "",
				"whether the server's cipher order wins", "cipher suite selection is ramjetd's own (Go's) and cannot be changed per host"),
			// Headers and proxying.
			ignored("connection-proxy-header", registry.RiskLow, registry.ScopeIngress, "",
				"the Connection header sent to members", "ramjetd sets the Connection header to members itself (keep-alive connections; upgrades such as WebSocket are passed through)"),
			ignored("client-body-buffer-size", registry.RiskLow, registry.ScopeIngress, "",
				"the memory buffer nginx keeps for request bodies", "ramjetd streams request bodies to the member (keeping at most 64 KiB for retries), so there is no buffer to size"),
			ignored("http2-push-preload", registry.RiskLow, registry.ScopeIngress, "false",
				"HTTP/2 server push of the resources named by Link preload headers", "HTTP/2 server push is not provided; Link headers reach the client unchanged"),
			ignored("fastcgi-index", registry.RiskMedium, registry.ScopeIngress, "",
				"the FastCGI index of backend-protocol: FCGI", noFastCGI),
			ignored("fastcgi-params-configmap", registry.RiskMedium, registry.ScopeIngress, "",
				"the FastCGI parameters of backend-protocol: FCGI, from a ConfigMap", noFastCGI),
			// Logs, tracing, metrics.
			ignored("enable-rewrite-log", registry.RiskLow, registry.ScopeIngress, "false",
				"logs nginx's rewrite decisions", "rewrites are not logged"),
			ignored("enable-opentelemetry", registry.RiskLow, registry.ScopeIngress, "",
				"OpenTelemetry spans for the object's requests", noTracing),
			wildcard("opentelemetry-", registry.RiskMedium, registry.ScopeIngress,
				"every opentelemetry-* key: OpenTelemetry settings", noTracing),
			ignored("enable-opentracing", registry.RiskLow, registry.ScopeIngress, "",
				"OpenTracing spans for the object's requests", noTracing),
			wildcard("opentracing-", registry.RiskLow, registry.ScopeIngress,
				"every opentracing-* key: OpenTracing settings", noTracing),
			ignored("enable-influxdb", registry.RiskLow, registry.ScopeIngress, "",
				"request metrics sent to InfluxDB", "no metrics are sent to InfluxDB; ramjetd's Prometheus metrics count requests per application"),
			wildcard("influxdb-", registry.RiskLow, registry.ScopeIngress,
				"every influxdb-* key: InfluxDB settings", "no metrics are sent to InfluxDB; ramjetd's Prometheus metrics count requests per application"),
		},
		// Parse is never called: every key is Ignored.
		Parse: func(*registry.Context, map[string]string) core.Fragment { return nil },
	})
}

// ignored is a key with no counterpart: doc says what it does in
// ingress-nginx (a phrase, made a sentence here), instead what happens in
// Ramjet.
func ignored(name string, risk registry.Risk, scope registry.Scope, def, doc, instead string) registry.Key {
	return registry.IgnoredKey(name, risk, scope, def, strings.ToUpper(doc[:1])+doc[1:]+".", instead)
}

// wildcard is ignored for every key that starts with prefix.
func wildcard(prefix string, risk registry.Risk, scope registry.Scope, doc, instead string) registry.Key {
	k := ignored(prefix, risk, scope, "", doc, instead)
	k.Wildcard = true
	return k
}
