package config

import "time"

// ExternalAuth asks an HTTP service whether each request of a route may
// pass, as ingress-nginx's auth-url (nginx auth_request): a subrequest
// without body carries the request's headers; a 2xx answer lets the
// request through, 401 and 403 go back to the client, anything else (a
// timeout and a connection failure included) is a 500.
type ExternalAuth struct {
	// URL is the service's http or https URL; its host is a DNS name or an
	// IP address, and every address it leads to passes the address rule
	// of members (CheckMemberIP). Its path and query may hold the
	// variables of AuthVariables, interpolated for each request; with
	// Self, its host may be $host, $http_host or $best_http_host.
	URL string `yaml:"url" json:"url"`
	// Self sends the subrequest to ramjetd itself instead of the URL's
	// host: to the first listener (by name) with TLS for an https URL,
	// without for an http one, at its own address (loopback when it
	// listens on every address). The URL's host is then only the Host and
	// the server name (SNI) of the subrequest, whose certificate is not
	// verified, since ramjetd is talking to itself. A subrequest that
	// reaches a route with external authentication again is answered 500
	// (a loop), never passed.
	Self bool `yaml:"self,omitempty" json:"self,omitempty"`
	// Method is the subrequest's method; empty means GET.
	Method string `yaml:"method,omitempty" json:"method,omitempty"`
	// RequestRedirect is the value of X-Auth-Request-Redirect, variables
	// of AuthVariables interpolated; empty sends the request URI.
	RequestRedirect string `yaml:"request_redirect,omitempty" json:"request_redirect,omitempty"`
	// ProxySetHeaders are headers set on the subrequest, replacing the
	// client's, variables of AuthVariables interpolated; an empty value
	// removes the header (nginx's proxy_set_header with "").
	ProxySetHeaders map[string]string `yaml:"proxy_set_headers,omitempty" json:"proxy_set_headers,omitempty"`
	// ResponseHeaders name headers of a 2xx answer copied onto the request
	// sent to the member, replacing what the client sent (removed when
	// the answer has none).
	ResponseHeaders []string `yaml:"response_headers,omitempty" json:"response_headers,omitempty"`
	// SigninURL, when set, turns a 401 into a 302 to it, carrying the
	// original URL in SigninRedirectParam unless its query has that
	// parameter. Variables of AuthVariables are interpolated; its host may
	// be $host, $http_host or $best_http_host and its scheme $scheme.
	SigninURL string `yaml:"signin_url,omitempty" json:"signin_url,omitempty"`
	// SigninRedirectParam names the query parameter of the original URL;
	// empty means rd.
	SigninRedirectParam string `yaml:"signin_redirect_param,omitempty" json:"signin_redirect_param,omitempty"`
	// AlwaysSetCookie sends the service's Set-Cookie with 401 and 403 too,
	// not only with answers that passed.
	AlwaysSetCookie bool `yaml:"always_set_cookie,omitempty" json:"always_set_cookie,omitempty"`
	// Timeouts bound the subrequest: connect defaults to 5s and response
	// to 60s (ingress-nginx's proxy-connect-timeout and
	// proxy-read-timeout).
	Timeouts *Timeouts `yaml:"timeouts,omitempty" json:"timeouts,omitempty"`
	// Cache remembers outcomes; nil asks the service for every request.
	Cache *AuthCache `yaml:"cache,omitempty" json:"cache,omitempty"`
	// Keepalive keeps connections to the service open; nil opens one per
	// subrequest (ingress-nginx's auth-keepalive: 0).
	Keepalive *AuthKeepalive `yaml:"keepalive,omitempty" json:"keepalive,omitempty"`
	// TLS verifies an https service as pools verify members.
	TLS *AuthTLS `yaml:"tls,omitempty" json:"tls,omitempty"`
}

// Defaults and bounds of external authentication.
const (
	DefaultAuthConnectTimeout  = 5 * time.Second
	DefaultAuthResponseTimeout = 60 * time.Second
	DefaultAuthSigninParam     = "rd"
	DefaultAuthCacheEntries    = 10000
	MaxAuthCacheEntries        = 1000000
	DefaultAuthCacheDuration   = 5 * time.Minute
	MaxAuthCacheDuration       = 24 * time.Hour
	MaxAuthCacheKeyParts       = 16
	DefaultAuthKeepaliveReqs   = 1000
	DefaultAuthKeepaliveIdle   = 60 * time.Second
	MaxAuthKeepaliveConns      = 10000
	MaxAuthProxySetHeaders     = 64
)

// AuthCache remembers the outcomes of external authentication by a key of
// request attributes.
type AuthCache struct {
	// Key lists the request attributes outcomes are keyed by: method,
	// scheme, host, uri (path and query as the client sent them), path
	// (normalised), client_ip, header:<Name>, cookie:<name>. Required.
	Key []string `yaml:"key" json:"key"`
	// Allowed is how long a 2xx is remembered.
	Allowed Duration `yaml:"allowed,omitempty" json:"allowed,omitempty"`
	// Unauthorized is how long a 401 is remembered.
	Unauthorized Duration `yaml:"unauthorized,omitempty" json:"unauthorized,omitempty"`
	// Forbidden is how long a 403 is remembered.
	Forbidden Duration `yaml:"forbidden,omitempty" json:"forbidden,omitempty"`
	// MaxEntries bounds the outcomes kept; zero means 10000.
	MaxEntries int `yaml:"max_entries,omitempty" json:"max_entries,omitempty"`
}

// Durations returns the durations of 2xx, 401 and 403: the fields, or when
// all three are zero ingress-nginx's default auth-cache-duration
// ("200 202 401 5m"): 5m, 5m and 0 (not remembered).
func (c *AuthCache) Durations() (allowed, unauthorized, forbidden time.Duration) {
	if c.Allowed == 0 && c.Unauthorized == 0 && c.Forbidden == 0 {
		return DefaultAuthCacheDuration, DefaultAuthCacheDuration, 0
	}
	return c.Allowed.Std(), c.Unauthorized.Std(), c.Forbidden.Std()
}

// AuthKeepalive is the connection pool to the authentication service.
type AuthKeepalive struct {
	// Connections is the number of idle connections kept.
	Connections int `yaml:"connections" json:"connections"`
	// Requests is the number of requests a connection serves before it is
	// closed; zero means 1000.
	Requests int `yaml:"requests,omitempty" json:"requests,omitempty"`
	// IdleTimeout closes a connection idle for longer; zero means 60s.
	IdleTimeout Duration `yaml:"idle_timeout,omitempty" json:"idle_timeout,omitempty"`
}

// AuthTLS is how an https authentication service is verified.
type AuthTLS struct {
	// ServerName is sent in SNI and verified; empty uses the URL's host.
	ServerName string `yaml:"server_name,omitempty" json:"server_name,omitempty"`
	// CAFile is a PEM bundle of the trusted authorities; empty uses the
	// system's roots.
	CAFile string `yaml:"ca_file,omitempty" json:"ca_file,omitempty"`
	// InsecureSkipVerify accepts any certificate. It excludes CAFile.
	InsecureSkipVerify bool `yaml:"insecure_skip_verify,omitempty" json:"insecure_skip_verify,omitempty"`
}
