// Package extauth is the external-auth family: ingress-nginx's auth-url
// and its settings. Before a request of the object goes on, ramjetd asks
// the service at auth-url (the route policy external_auth): a 2xx lets it
// through with the headers of auth-response-headers copied from the
// answer, 401 and 403 go back to the client (or 401 redirects to
// auth-signin), anything else is 500. Every invalid value makes the object
// not served: serving it without the check, or with another one, would
// expose what its owner meant to protect.
package extauth

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

// The keys Parse sees.
const (
	keyURL               = "auth-url"
	keyMethod            = "auth-method"
	keyRequestRedirect   = "auth-request-redirect"
	keyResponseHeaders   = "auth-response-headers"
	keyProxySetHeaders   = "auth-proxy-set-headers"
	keySignin            = "auth-signin"
	keySigninParam       = "auth-signin-redirect-param"
	keyAlwaysSetCookie   = "auth-always-set-cookie"
	keyCacheKey          = "auth-cache-key"
	keyCacheDuration     = "auth-cache-duration"
	keyKeepalive         = "auth-keepalive"
	keyKeepaliveRequests = "auth-keepalive-requests"
	keyKeepaliveTimeout  = "auth-keepalive-timeout"
	keyEnableGlobal      = "enable-global-auth"
)

// variables is the Doc of the keys whose nginx variables are interpolated.
const variables = " The nginx variables $host, $http_host, $best_http_host, $scheme, $pass_access_scheme, $request_uri, $escaped_request_uri, $args, " +
	"$request_method and $remote_addr (also written ${name}) are the request's, interpolated for each request."

// otherVariables is the Differs of the keys whose nginx variables are
// interpolated.
const otherVariables = "Other nginx variables ($uri, $http_<name>, $request_id, ...) and a $ that starts none are invalid and the object is not served; " +
	"$best_http_host is the Host as the client sent it (X-Forwarded-Host is never believed for it)."

func init() {
	registry.Register(&registry.Family{
		Name:          "external-auth",
		Doc:           "External authentication: a subrequest to auth-url decides whether each request of the object goes on; without auth-url the other keys configure nothing.",
		AccessControl: true,
		Keys: []registry.Key{
			{Name: keyURL, Validate: registry.Trimmed(validateAuthURL), Risk: registry.RiskHigh, Scope: registry.ScopeIngress,
				Doc: "The http or https URL of the authentication service, asked before each request: a 2xx lets it through, 401 and 403 go back to the client, " +
					"any other answer, a timeout or a connection failure is 500. Its host is a DNS name (a Service's cluster name such as oauth2-proxy.auth.svc.cluster.local) or an IP address; " +
					"an address the address rule of members refuses (loopback, link-local, unspecified) makes the object not served (AddressRefused), and ramjetd applies the rule to what a name resolves to. " +
					"An https service is verified against the system's roots with --backend-tls-verify=always (the default), not verified with annotated. " +
					"Its path and query may hold variables." + variables,
				Differs: otherVariables + " A host of $host, $http_host or $best_http_host (alone, without port; as in https://$host/oauth2/auth) is the request's own host, " +
					"and ramjetd asks itself: the subrequest goes to its own HTTPS (or HTTP) listener on loopback, with that host as Host and server name, " +
					"never through DNS (ingress-nginx resolves the name, which usually leads back to its own load balancer). " +
					"The route that serves the service (for example the /oauth2 Ingress of oauth2-proxy) sees the subrequest come from 127.0.0.1, " +
					"so a whitelist-source-range on it must allow that address; and if that route itself has external authentication " +
					"(its own auth-url, or the global one without enable-global-auth: \"false\"), ramjetd answers 500 instead of looping. " +
					"The connection and answer timeouts are 5s and 60s, ingress-nginx's defaults, whatever the object's proxy-*-timeout."},
			{Name: keyMethod, Validate: registry.Trimmed(validateMethod), Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "GET",
				Doc: "The method of the subrequest: GET, HEAD, POST, PUT, PATCH, DELETE, CONNECT, OPTIONS or TRACE (upper case); with it, the subrequest also carries X-Original-URI."},
			{Name: keyRequestRedirect, Validate: registry.Trimmed(validateRequestRedirect), Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc:     "The value of X-Auth-Request-Redirect sent to the service; without it, the request URI." + variables,
				Differs: otherVariables},
			{Name: keyResponseHeaders, List: true, Validate: validateResponseHeaders, Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc: "Comma-separated headers of the service's 2xx answer set on the request sent to the member, replacing what the client sent " +
					"(and removed when the answer has none, so a client cannot forge them).",
				Differs: "Names with '_' (which never reach a member), hop-by-hop, framing and forwarding headers are invalid and the object is not served; " +
					"ingress-nginx accepts them (and copies an absent header as empty)."},
			{Name: keyProxySetHeaders, Names: registry.ConfigMap, Validate: registry.Trimmed(registry.ObjectName(registry.ConfigMap)), Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc: "A ConfigMap of the object's namespace (name, or namespace/name) whose entries are headers set on the subrequest (name: value), replacing what the client sent; " +
					"an empty value removes the header. Values may hold variables." + variables + " A change of the ConfigMap applies without touching the Ingress.",
				Differs: otherVariables + " A missing ConfigMap, one of another namespace, more than 64 entries, or an entry that is no header name, a hop-by-hop, framing or forwarding header " +
					"(X-Forwarded-*, X-Real-IP, ...) or a value with control characters makes the object not served (InvalidAnnotation naming the entry); " +
					"ingress-nginx accepts every name of letters, digits, '-' and '_' and interpolates every nginx variable."},
			{Name: keySignin, Validate: registry.Trimmed(validateSignin), Risk: registry.RiskHigh, Scope: registry.ScopeIngress,
				Doc: "An http or https URL a 401 of the service redirects to (302), with the original URL (scheme://host/request-uri) appended in auth-signin-redirect-param, " +
					"unless the URL's query already has that parameter (as in https://$host/oauth2/start?rd=$escaped_request_uri)." + variables,
				Differs: otherVariables + " The host may be a variable only as $host, $http_host or $best_http_host alone, and the scheme only as $scheme or $pass_access_scheme: " +
					"a redirect whose host comes from the request URI would be an open redirect."},
			{Name: keySigninParam, Validate: registry.Trimmed(validateSigninParam), Risk: registry.RiskMedium, Scope: registry.ScopeIngress, Default: config.DefaultAuthSigninParam,
				Doc:     "The query parameter of auth-signin that carries the original URL: letters, digits and _.~- (at most 64).",
				Differs: "A name outside those characters is invalid and the object is not served."},
			{Name: keyAlwaysSetCookie, Validate: registry.Trimmed(registry.Bool), Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "false",
				Doc: "true also passes the service's Set-Cookie to the client with 401 and 403, not only with answers that let the request through."},
			{Name: keyCacheKey, Validate: registry.Trimmed(validateCacheKey), Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc: "Turns on the cache of outcomes, keyed by the nginx variables of the value: $request_method, $scheme, $host and $http_host, $request_uri, $uri, $remote_addr, " +
					"$http_<name> (a request header) and $cookie_<name> (a cookie); text between them is ignored. The cache is in memory, per route, at most 10000 outcomes.",
				Differs: "Other variables ($remote_user, $args, ...) and a value without variable (every client would share one outcome) are invalid and the object is not served; " +
					"ingress-nginx's cache is on disk and survives reloads, Ramjet's is emptied by a reload."},
			{Name: keyCacheDuration, List: true, Validate: validateCacheDuration, Risk: registry.RiskMedium, Scope: registry.ScopeIngress, Default: "200 202 401 5m",
				Doc: "How long outcomes are cached (with auth-cache-key), as nginx's proxy_cache_valid: comma-separated entries of status codes (or any) and a time " +
					"(ms, s, m, h, d, w, M, y; several add up), up to 24h. An entry without code is 200.",
				Differs: "The codes are read by class: every 2xx code gives the time of the answers that pass (any 2xx), 401 and 403 their own; " +
					"other codes are not remembered (ramjetd answers them 500 and never caches a failure). " +
					"Two 2xx codes with different times, a time over 24h or anything nginx's syntax does not have are invalid and the object is not served."},
			{Name: keyKeepalive, Validate: registry.Trimmed(registry.Int(0, config.MaxAuthKeepaliveConns)), Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "0",
				Doc:     "Idle connections to the service kept open (0 to 10000); 0 opens one per subrequest.",
				Differs: "A negative value is invalid and the object is not served (ingress-nginx takes it as 0)."},
			{Name: keyKeepaliveRequests, Validate: registry.Trimmed(registry.Int(1, maxKeepaliveRequests)), Risk: registry.RiskLow, Scope: registry.ScopeIngress,
				Default: "1000",
				Doc:     "The subrequests a kept connection serves before it is closed (with auth-keepalive).",
				Differs: "0 and negative values are invalid and the object is not served (ingress-nginx turns keep-alive off)."},
			{Name: keyKeepaliveTimeout, Validate: registry.Trimmed(registry.Int(1, maxKeepaliveTimeout)), Risk: registry.RiskLow, Scope: registry.ScopeIngress,
				Default: "60",
				Doc:     "Seconds a kept connection may stay idle (1 to 3600, with auth-keepalive).",
				Differs: "0, negative values and more than an hour are invalid and the object is not served (ingress-nginx turns keep-alive off for the first two)."},
			{Name: keyEnableGlobal, Validate: registry.Trimmed(registry.Bool), Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "true",
				Doc: "false exempts the object from the controller's --global-auth-url (external authentication of every object without an auth-url of its own)."},
		},
		Parse: parse,
	})
}

// Bounds of the keep-alive keys.
const (
	maxKeepaliveRequests = 1 << 30
	maxKeepaliveTimeout  = 3600
)

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	noGlobal := false
	if v, ok := values[keyEnableGlobal]; ok {
		noGlobal = !registry.IsTrue(v)
	}
	fragment := ownAuth(ctx, values)
	if !noGlobal {
		return fragment
	}
	return func(s *core.Settings) {
		if fragment != nil {
			fragment(s)
		}
		s.NoGlobalAuth = true
	}
}

// ownAuth is the fragment of the object's own auth-url and its settings.
func ownAuth(ctx *registry.Context, values map[string]string) core.Fragment {
	raw, ok := values[keyURL]
	if !ok {
		if !ctx.Rejected(keyURL) {
			ignoreWithoutURL(ctx, values)
		}
		return nil
	}
	setHeaders, ok := proxySetHeaders(ctx, values)
	if !ok {
		return nil
	}
	if satisfy, _ := ctx.Value("satisfy"); trim(satisfy) == config.SatisfyAny {
		if _, basic := ctx.Value("auth-type"); basic {
			ctx.Refuse(core.UnsupportedAccessControl, "%ssatisfy: any with both basic authentication (%sauth-type) and %s%s is not provided: "+
				"Ramjet lets the source ranges or one authentication suffice; the object is not served", registry.Prefix, registry.Prefix, registry.Prefix, keyURL)
			return nil
		}
	}
	url := trim(raw)
	self, err := target(url)
	if err != nil {
		ctx.Refuse(core.AddressRefused, "%s%s: %v, which the authentication service may not be (the address rule of members); the object is not served", registry.Prefix, keyURL, err)
		return nil
	}
	auth := &config.ExternalAuth{
		URL:                 url,
		Self:                self,
		Method:              trim(values[keyMethod]),
		RequestRedirect:     trim(values[keyRequestRedirect]),
		ProxySetHeaders:     setHeaders,
		ResponseHeaders:     headerList(values[keyResponseHeaders]),
		SigninURL:           trim(values[keySignin]),
		SigninRedirectParam: trim(values[keySigninParam]),
		AlwaysSetCookie:     registry.IsTrue(values[keyAlwaysSetCookie]),
		Cache:               cache(ctx, values),
		Keepalive:           keepalive(values),
	}
	return func(s *core.Settings) {
		s.Policies.ExternalAuth = auth
		s.Protected = true
	}
}

// Global checks the controller's --global-auth-url as auth-url is checked
// and returns the policy every object without an auth-url of its own gets.
func Global(url string) (*config.ExternalAuth, error) {
	url = trim(url)
	if err := validateAuthURL(url); err != nil {
		return nil, fmt.Errorf("--global-auth-url: %w", err)
	}
	self, err := target(url)
	if err != nil {
		return nil, fmt.Errorf("--global-auth-url: %w, which the authentication service may not be (the address rule of members)", err)
	}
	return &config.ExternalAuth{URL: url, Self: self}, nil
}

// proxySetHeaders are the headers of the ConfigMap auth-proxy-set-headers
// names (nil without the key), each checked as ramjetd checks
// proxy_set_headers; false when the object is not served.
func proxySetHeaders(ctx *registry.Context, values map[string]string) (map[string]string, bool) {
	ref, ok := values[keyProxySetHeaders]
	if !ok {
		return nil, !ctx.Rejected(keyProxySetHeaders)
	}
	name, ok := ctx.Ref(registry.ConfigMap, keyProxySetHeaders, trim(ref))
	if !ok {
		return nil, false
	}
	data, ok := ctx.ConfigMap(name)
	switch {
	case !ok:
		ctx.Invalid(keyProxySetHeaders, "ConfigMap %s does not exist", core.Quote(name))
		return nil, false
	case len(data) > config.MaxAuthProxySetHeaders:
		ctx.Invalid(keyProxySetHeaders, "ConfigMap %s has %d entries, at most %d headers are sent", core.Quote(name), len(data), config.MaxAuthProxySetHeaders)
		return nil, false
	}
	for _, header := range slices.Sorted(maps.Keys(data)) {
		if err := config.CheckAuthSetHeader(header, data[header]); err != nil {
			ctx.Invalid(keyProxySetHeaders, "ConfigMap %s, entry %s: %v", core.Quote(name), core.Quote(header), err)
			return nil, false
		}
	}
	if len(data) == 0 {
		return nil, true
	}
	return data, true
}

// ignoreWithoutURL reports the settings of an object without auth-url,
// which configure nothing (as in ingress-nginx).
func ignoreWithoutURL(ctx *registry.Context, values map[string]string) {
	for _, key := range registry.Present(values, keyEnableGlobal) {
		ctx.Note(core.UnknownAnnotation, "%s only configures external authentication, and the object has no %s%s; it is ignored", key, registry.Prefix, keyURL)
	}
}

// keepalive is the connection pool of auth-keepalive*, nil without
// connections kept.
func keepalive(values map[string]string) *config.AuthKeepalive {
	conns, _ := registry.ParseInt(values[keyKeepalive], 0, config.MaxAuthKeepaliveConns)
	if conns == 0 {
		return nil
	}
	k := &config.AuthKeepalive{Connections: conns}
	if v, ok := values[keyKeepaliveRequests]; ok {
		k.Requests, _ = registry.ParseInt(v, 1, maxKeepaliveRequests)
	}
	if v, ok := values[keyKeepaliveTimeout]; ok {
		seconds, _ := registry.ParseInt(v, 1, maxKeepaliveTimeout)
		k.IdleTimeout = config.Duration(seconds) * config.Duration(time.Second)
	}
	return k
}
