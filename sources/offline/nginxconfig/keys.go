package nginxconfig

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ramjet-dev/ramjet/annotations/customheaders"
)

// What happens instead, for the groups of keys without a counterpart.
const (
	tuning      = "an nginx tuning setting: ramjetd sizes its own buffers, workers and tables, and has no setting for it"
	upstreamKA  = "ramjetd keeps idle kept-alive connections to members itself (reused while they last, closed when a member leaves); their number and lifetime are not settable"
	logging     = "ramjetd writes its logs to stderr in its own format (logFormat: text or json; server.access_log for one line per request); log formats, paths and syslog are not settable"
	tracing     = "no tracing spans are produced; trace context headers reach the member unchanged"
	snippets    = "nginx configuration snippets are never served: an Ingress with a snippet annotation is not served (docs/annotations.md)"
	compression = "ramjetd does not compress answers; what members compress reaches the client unchanged"
	geoip       = "no GeoIP lookups: requests carry no GeoIP variables or headers"
	tlsSettings = "ramjetd's TLS is Go's: TLS 1.2 and 1.3, Go's cipher suites and curves, session tickets with keys rotated by ramjetd, no OCSP stapling, no early data; none of it is settable"
	hsts        = "ramjetd sends no Strict-Transport-Security header, where ingress-nginx sends one on HTTPS answers by default (max-age 31536000, includeSubDomains); the Ingresses that need it add it with the custom-headers annotation"
	streams     = "TCP and UDP services (the tcp-services and udp-services ConfigMaps) are not served, so their settings have nothing to apply to"
	listeners   = "ramjetd's listeners are the chart's (ingressController.containerPort, service): they listen on every address, IPv4 and IPv6, HTTPS with HTTP/2"
	headers     = "no controller-wide header changes: members' answers keep their headers (Server excepted, see server.server_tokens), requests get ramjetd's forwarding headers; per Ingress, custom-headers and the proxy-set-headers-like annotations apply"
	blocking    = "no controller-wide blocking of addresses, user agents or referers; per Ingress, denylist-source-range and whitelist-source-range refuse addresses"
	statusPage  = "there is no nginx status page; ramjetd's metrics are served on its health listener (/metrics)"
	globalAuth  = "only the URL of the global authentication is settable (ingressController.globalAuthURL); it asks with auth-url's defaults, and an Ingress that needs this setting gives it auth-url with its keys itself"
	risk        = "Ramjet serves the keys of the enabled annotation families whatever their risk level; choose families with ingressController.annotations (see ramjet-ingress annotations)"
)

// rules are the keys of ingress-nginx's controller ConfigMap.
var rules = slices.Concat(
	[]rule{
		{key: "proxy-body-size", nginxDefault: "1m", apply: bodySize},
		seconds("client-body-timeout", "server.limits.read_body_timeout", time.Hour, "the longest wait for each read of a request body; over it 408"),
		seconds("client-header-timeout", "server.limits.read_header_timeout", 5*time.Minute, "the time to receive a request's headers, and the TLS handshake"),
		{key: "keep-alive", apply: keepAlive},
		{key: "http2-max-concurrent-streams", apply: http2Streams},
		{key: "large-client-header-buffers", apply: headerBuffers},
		boolean("server-tokens", func(b bool, _ map[string]string) outcome {
			return mapped(`true gives "Server: ramjet" without a version; false sends no Server header, the members' included`, Setting{"server.server_tokens", b})
		}),
		withDefault(boolean("disable-access-log", func(b bool, _ map[string]string) outcome {
			return mapped("one line per request in ramjetd's own format, on stderr", Setting{"server.access_log", !b})
		}), "false"),
		boolean("use-forwarded-headers", trustedProxies),
		boolean("enable-real-ip", trustedProxies),
		{key: "proxy-real-ip-cidr", apply: func(string, map[string]string) outcome {
			return same("read with use-forwarded-headers and enable-real-ip, which give server.trusted_proxies")
		}},
		sameWhen("forwarded-for-header", "ramjetd reads the client's address from the X-Forwarded-For (or Forwarded) header of trusted proxies only", "X-Forwarded-For"),
		sameWhen("compute-full-forwarded-for", "ramjetd always appends the address it got the request from to a trusted proxy's X-Forwarded-For (false in ingress-nginx sends what the proxy sent)", "true"),
		limitStatus("limit-req-status-code", "limit-conn-status-code"),
		limitStatus("limit-conn-status-code", "limit-req-status-code"),
		{key: "global-auth-url", apply: globalAuthURL},
		{key: "worker-shutdown-timeout", apply: shutdownTimeout},
		{key: "error-log-level", apply: logLevel},
		sameWhen("use-http2", "HTTPS listeners always serve HTTP/2 by ALPN", "true"),
		sameWhen("use-proxy-protocol", "the PROXY protocol is not provided: a load balancer that sends it must stop", "false"),
		sameWhen("allow-snippet-annotations", snippets, "false"),
		withDefault(sameWhen("hsts", hsts, "false"), "true"),
		sameWhen("generate-request-id", "ramjetd always gives requests without an X-Request-ID one (32 hex digits)", "true"),
		sameWhen("retry-non-idempotent", "ramjetd never sends a non-idempotent request again after it was sent to a member", "false"),
		sameWhen("http-redirect-code", "ramjetd's HTTPS redirects are 308", "308"),
		sameWhen("relative-redirects", "ramjetd's redirects name the scheme and host", "false"),
		sameWhen("no-tls-redirect-locations", "only /.well-known/acme-challenge/ is exempt from the HTTPS redirect", "/.well-known/acme-challenge"),
		sameWhen("no-auth-locations", "only /.well-known/acme-challenge/ is exempt from the global authentication", "/.well-known/acme-challenge"),
		sameWhen("limit-conn-zone-variable", "the limits of limit-connections count connections per client address", "$binary_remote_addr"),
		sameWhen("annotation-value-word-blocklist", "annotation values are typed and checked, and never written into configuration text, so no words need blocking", ""),
		sameWhen("allow-cross-namespace-resources", "an annotation may name a Secret or ConfigMap of its own namespace only (Ramjet's one cross-namespace rule)", "false"),
		sameWhen("strict-validate-path-type", "Exact and Prefix paths are matched literally, whatever characters they hold, so they need no check", "true"),
		sameWhen("enable-modsecurity", "ModSecurity is per Ingress (the enable-modsecurity annotation); there is no controller-wide switch", "false"),
		sameWhen("enable-owasp-modsecurity-crs", "the OWASP Core Rule Set is per Ingress (the enable-owasp-core-rules annotation); there is no controller-wide switch", "false"),
		sameWhen("allow-backend-server-header", "members' Server headers are never passed on (server.server_tokens)", "false"),
		sameWhen("proxy-add-original-uri-header", "members get no X-Original-URI header", "false"),
		sameWhen("disable-ipv6", listeners, "false"),
		sameWhen("enable-underscores-in-headers", "ramjetd passes request headers with underscores in their names on to members, where nginx drops them by default", "true"),
		sameWhen("ignore-invalid-headers", "ramjetd refuses requests with header names HTTP does not allow (400)", "false"),
		perIngress("proxy-connect-timeout", ""),
		perIngress("proxy-read-timeout", ""),
		perIngress("proxy-send-timeout", ""),
		perIngress("proxy-buffers-number", ""),
		perIngress("proxy-buffer-size", ""),
		perIngress("proxy-buffering", ""),
		perIngress("proxy-request-buffering", ""),
		perIngress("proxy-max-temp-file-size", ""),
		perIngress("proxy-cookie-path", ""),
		perIngress("proxy-cookie-domain", ""),
		perIngress("proxy-next-upstream", ""),
		perIngress("proxy-next-upstream-timeout", ""),
		perIngress("proxy-next-upstream-tries", ""),
		perIngress("proxy-redirect-from", ""),
		perIngress("proxy-redirect-to", ""),
		perIngress("proxy-http-version", ""),
		perIngress("ssl-redirect", ""),
		perIngress("force-ssl-redirect", ""),
		perIngress("use-port-in-redirects", ""),
		perIngress("preserve-trailing-slash", ""),
		perIngress("app-root", ""),
		perIngress("load-balance", ""),
		perIngress("upstream-hash-by", ""),
		perIngress("upstream-hash-by-subset", ""),
		perIngress("upstream-hash-by-subset-size", ""),
		perIngress("whitelist-source-range", ""),
		perIngress("denylist-source-range", ""),
		perIngress("limit-rate", ""),
		perIngress("limit-rate-after", ""),
		perIngress("custom-http-errors", ""),
		perIngress("disable-proxy-intercept-errors", ""),
		perIngress("service-upstream", ""),
		perIngress("client-body-buffer-size", ""),
	},
	none(tuning, "client-header-buffer-size", "proxy-busy-buffers-size", "enable-multi-accept", "max-worker-connections",
		"max-worker-open-files", "map-hash-bucket-size", "server-name-hash-max-size", "server-name-hash-bucket-size",
		"proxy-headers-hash-max-size", "proxy-headers-hash-bucket-size", "variables-hash-bucket-size", "variables-hash-max-size",
		"worker-processes", "worker-cpu-affinity", "enable-aio-write", "reuse-port", "lua-shared-dicts", "enable-serial-reloads",
		"ssl-buffer-size", "grpc-buffer-size-kb", "ssl-session-cache", "ssl-session-cache-size", "debug-connections",
		"keep-alive-requests", "http2-max-requests", "http2-max-field-size", "http2-max-header-size", "disable-ipv6-dns", "default-type"),
	none(upstreamKA, "upstream-keepalive-connections", "upstream-keepalive-time", "upstream-keepalive-timeout", "upstream-keepalive-requests"),
	none(logging, "log-format-upstream", "log-format-stream", "log-format-escape-json", "log-format-escape-none", "access-log-params",
		"access-log-path", "http-access-log-path", "stream-access-log-path", "error-log-path", "enable-access-log-for-default-backend",
		"enable-auth-access-log", "disable-http-access-log", "disable-stream-access-log", "skip-access-log-urls", "enable-syslog",
		"syslog-host", "syslog-port"),
	prefixes(tracing, "enable-opentelemetry", "opentelemetry-", "otlp-", "otel-", "jaeger-", "zipkin-", "datadog-", "enable-opentracing", "opentracing-"),
	none(snippets, "main-snippet", "http-snippet", "server-snippet", "stream-snippet", "location-snippet", "modsecurity-snippet", "global-auth-snippet"),
	none(compression, "use-gzip", "gzip-level", "gzip-min-length", "gzip-types", "gzip-disable", "enable-brotli", "brotli-level", "brotli-min-length", "brotli-types"),
	none(geoip, "use-geoip", "use-geoip2", "geoip2-autoreload-in-minutes"),
	none(tlsSettings, "ssl-protocols", "ssl-ciphers", "ssl-ecdh-curve", "ssl-dh-param", "ssl-session-tickets", "ssl-session-ticket-key",
		"ssl-session-timeout", "ssl-early-data", "ssl-reject-handshake", "enable-ocsp", "proxy-ssl-location-only"),
	none(hsts, "hsts-include-subdomains", "hsts-max-age", "hsts-preload"),
	none(streams, "proxy-stream-timeout", "proxy-stream-next-upstream", "proxy-stream-next-upstream-timeout", "proxy-stream-next-upstream-tries", "proxy-stream-responses"),
	none(listeners, "bind-address", "bind-address-ipv4", "bind-address-ipv6", "proxy-protocol-header-timeout", "forwarded-for-proxy-protocol-header"),
	none(headers, "add-headers", "proxy-set-headers", "hide-headers", "forwarded-host-header"),
	none(blocking, "block-cidrs", "block-user-agents", "block-referers"),
	none(statusPage, "nginx-status-ipv4-whitelist", "nginx-status-ipv6-whitelist"),
	none(globalAuth, "global-auth-method", "global-auth-signin", "global-auth-signin-redirect-param", "global-auth-response-headers",
		"global-auth-request-redirect", "global-auth-cache-key", "global-auth-cache-duration", "global-auth-always-set-cookie"),
	none(risk, "annotations-risk-level"),
	[]rule{
		{key: "global-allowed-response-headers", apply: allowedHeaders},
		{key: "global-rate-limit-memcached-host", apply: func(v string, _ map[string]string) outcome {
			return mapped(memcachedNote, Setting{"ingressController.globalRateLimit.memcachedHost", v})
		}},
		{key: "global-rate-limit-memcached-port", apply: func(v string, _ map[string]string) outcome {
			return boundedInt(v, 1, 65535, "ingressController.globalRateLimit.memcachedPort", memcachedNote)
		}},
		{key: "global-rate-limit-memcached-pool-size", apply: func(v string, _ map[string]string) outcome {
			return boundedInt(v, 1, 10000, "ingressController.globalRateLimit.poolSize", memcachedNote)
		}},
		{key: "global-rate-limit-memcached-connect-timeout", apply: memcachedTimeout},
		{key: "global-rate-limit-status-code", apply: func(v string, _ map[string]string) outcome {
			return boundedInt(v, 400, 599, "ingressController.globalRateLimit.statusCode", "")
		}},
	},
	none("idle connections to memcached are kept, up to the pool size, until ramjetd stops", "global-rate-limit-memcached-max-idle-timeout"),
)

// memcachedNote is said of the memcached keys, which ingress-nginx 1.12
// removed with its global rate limits.
const memcachedNote = "ingress-nginx removed its global rate limits in 1.12; Ramjet serves them (docs/controller.md, Global rate limits)"

// boundedInt maps a whole number min..max to path.
func boundedInt(v string, min, max int, path, note string) outcome {
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		return invalid(fmt.Sprintf("%s is not a number %d..%d", quote(v), min, max))
	}
	return mapped(note, Setting{path, n})
}

// memcachedTimeout maps global-rate-limit-memcached-connect-timeout,
// milliseconds in ingress-nginx, to a duration.
func memcachedTimeout(v string, _ map[string]string) outcome {
	o := boundedInt(v, 1, 5000, "", "")
	if o.status == Invalid {
		return invalid(quote(v) + " is not a number of milliseconds 1..5000 (ramjetd waits at most 5s)")
	}
	d := time.Duration(o.settings[0].Value.(int)) * time.Millisecond
	return mapped(memcachedNote+"; the bound of each memcached step", Setting{"ingressController.globalRateLimit.connectTimeout", d.String()})
}

// allowedHeaders maps global-allowed-response-headers, the names the
// custom-headers annotation may set.
func allowedHeaders(v string, _ map[string]string) outcome {
	names, err := customheaders.ParseAllowed(v)
	if err != nil {
		return invalid(strings.TrimPrefix(err.Error(), "--global-allowed-response-headers: "))
	}
	return mapped("the names the custom-headers annotation may set, matched exactly", Setting{"ingressController.globalAllowedResponseHeaders", names})
}

// keepAlive maps keep-alive, seconds a kept-alive connection may idle.
func keepAlive(v string, data map[string]string) outcome {
	if v == "0" {
		return noCounterpart(`"0" turns keep-alive off in nginx; ramjetd always keeps connections alive, idle up to server.limits.idle_timeout (60s by default)`)
	}
	return seconds("keep-alive", "server.limits.idle_timeout", time.Hour, "a kept-alive client connection idle this long is closed").apply(v, data)
}

// http2Streams maps http2-max-concurrent-streams.
func http2Streams(v string, _ map[string]string) outcome {
	return boundedInt(v, 1, 10000, "server.limits.http2_max_concurrent_streams", "")
}

// withDefault gives r ingress-nginx's default value, translated when the
// key is absent.
func withDefault(r rule, nginxDefault string) rule {
	r.nginxDefault = nginxDefault
	return r
}
