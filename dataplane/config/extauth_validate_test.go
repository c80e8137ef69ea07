package config_test

import (
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

func TestValidateExternalAuth(t *testing.T) {
	const E = "tenants.t.applications.app.routes[0].policies.external_auth"
	valid := func() *config.ExternalAuth {
		return &config.ExternalAuth{
			URL: "https://auth.shop.svc.cluster.local:8443/check?x=1", Method: "POST", RequestRedirect: "https://app.test/",
			ProxySetHeaders: map[string]string{"X-Tenant": "shop"}, ResponseHeaders: []string{"X-Auth-Request-User"},
			SigninURL: "https://login.test/start", SigninRedirectParam: "return_to", AlwaysSetCookie: true,
			Timeouts:  &config.Timeouts{Connect: config.Duration(time.Second), Response: config.Duration(10 * time.Second)},
			Cache:     &config.AuthCache{Key: []string{"header:Authorization", "cookie:session", "host", "uri", "path", "method", "scheme", "client_ip"}, Allowed: config.Duration(time.Minute), MaxEntries: 100},
			Keepalive: &config.AuthKeepalive{Connections: 8, Requests: 100, IdleTimeout: config.Duration(time.Minute)},
			TLS:       &config.AuthTLS{ServerName: "auth.shop", CAFile: "/etc/ca.pem"},
		}
	}
	tests := []struct {
		name     string
		mutate   func(e *config.ExternalAuth)
		loopback bool
		want     []wantErr
	}{
		{"every field valid", func(*config.ExternalAuth) {}, false, nil},
		{"an IP address", func(e *config.ExternalAuth) { e.URL = "http://10.0.0.7:9000/"; e.TLS = nil }, false, nil},
		{"url required", func(e *config.ExternalAuth) { e.URL = "" }, false, []wantErr{{E + ".url", "is required"}}},
		{"url scheme", func(e *config.ExternalAuth) { e.URL = "ftp://auth/" }, false, []wantErr{{E + ".url", "must be an http or https URL"}}},
		{"url relative", func(e *config.ExternalAuth) { e.URL = "/auth" }, false, []wantErr{{E + ".url", "must be an http or https URL"}}},
		{"url with user", func(e *config.ExternalAuth) { e.URL = "https://u:p@auth/" }, false, []wantErr{{E + ".url", "must not hold a user or password"}}},
		{"url with a variable host without self", func(e *config.ExternalAuth) { e.URL = "https://$host/auth"; e.TLS = nil }, false,
			[]wantErr{{E + ".url", "a variable host needs self"}}},
		{"self to http", func(e *config.ExternalAuth) {
			e.URL = "http://$host/oauth2/auth?uri=$escaped_request_uri"
			e.Self = true
			e.TLS = nil
		}, false, nil},
		{"self without a TLS listener", func(e *config.ExternalAuth) { e.URL = "https://$host/oauth2/auth"; e.Self = true; e.TLS = nil }, false,
			[]wantErr{{E + ".url", "self: no listener with TLS"}}},
		{"self with tls", func(e *config.ExternalAuth) { e.URL = "http://$host/auth"; e.Self = true }, false, []wantErr{{E + ".tls", "does not apply with self"}}},
		{"self with a loopback literal", func(e *config.ExternalAuth) { e.URL = "http://127.0.0.1/auth"; e.Self = true; e.TLS = nil }, false, nil},
		{"url with a variable host and port", func(e *config.ExternalAuth) { e.URL = "http://$host:8080/auth"; e.Self = true; e.TLS = nil }, false,
			[]wantErr{{E + ".url", "$host, $http_host or $best_http_host alone, without port"}}},
		{"url with a host in a variable", func(e *config.ExternalAuth) { e.URL = "http://$request_uri/auth"; e.Self = true; e.TLS = nil }, false,
			[]wantErr{{E + ".url", "$host, $http_host or $best_http_host alone"}}},
		{"url with an unknown variable", func(e *config.ExternalAuth) { e.URL = "https://auth/check?u=$remote_user" }, false,
			[]wantErr{{E + ".url", "the variable $remote_user, which is not interpolated"}}},
		{"url with a lone $", func(e *config.ExternalAuth) { e.URL = "https://auth/check?u=$" }, false, []wantErr{{E + ".url", "a $ that starts no variable"}}},
		{"url with a braced variable", func(e *config.ExternalAuth) { e.URL = "https://auth/check?u=${request_uri}x" }, false, nil},
		{"url with an open brace", func(e *config.ExternalAuth) { e.URL = "https://auth/check?u=${request_uri" }, false, []wantErr{{E + ".url", "a $ that starts no variable"}}},
		{"request_redirect with variables", func(e *config.ExternalAuth) { e.RequestRedirect = "$scheme://$host$request_uri" }, false, nil},
		{"request_redirect with an unknown variable", func(e *config.ExternalAuth) { e.RequestRedirect = "$request_body" }, false,
			[]wantErr{{E + ".request_redirect", "the variable $request_body"}}},
		{"signin_url with variables", func(e *config.ExternalAuth) { e.SigninURL = "$scheme://$host/oauth2/start?rd=$escaped_request_uri" }, false, nil},
		{"signin_url with a variable scheme that is not one", func(e *config.ExternalAuth) { e.SigninURL = "$host://login/" }, false,
			[]wantErr{{E + ".signin_url", "the scheme must be http, https or $scheme"}}},
		{"signin_url with a fragment", func(e *config.ExternalAuth) { e.SigninURL = "https://login/#x" }, false, []wantErr{{E + ".signin_url", "must not hold a fragment"}}},
		{"url with whitespace", func(e *config.ExternalAuth) { e.URL = "https://auth/ x" }, false, []wantErr{{E + ".url", "must not hold control characters or whitespace"}}},
		{"url loopback", func(e *config.ExternalAuth) { e.URL = "http://127.0.0.1:9000/"; e.TLS = nil }, false, []wantErr{{E + ".url", "is a loopback address"}}},
		{"url loopback allowed", func(e *config.ExternalAuth) { e.URL = "http://127.0.0.1:9000/"; e.TLS = nil }, true, nil},
		{"url link-local", func(e *config.ExternalAuth) { e.URL = "http://169.254.169.254/"; e.TLS = nil }, true, []wantErr{{E + ".url", "is a link-local address"}}},
		{"url unspecified IPv6", func(e *config.ExternalAuth) { e.URL = "http://[::]:80/"; e.TLS = nil }, true, []wantErr{{E + ".url", "is an unspecified address"}}},
		{"method", func(e *config.ExternalAuth) { e.Method = "GET X" }, false, []wantErr{{E + ".method", "is not a method"}}},
		{"request_redirect with LF", func(e *config.ExternalAuth) { e.RequestRedirect = "a\nb" }, false, []wantErr{{E + ".request_redirect", "control characters"}}},
		{"proxy_set_headers hop-by-hop", func(e *config.ExternalAuth) { e.ProxySetHeaders = map[string]string{"Connection": "x"} }, false,
			[]wantErr{{E + ".proxy_set_headers.Connection", "hop-by-hop"}}},
		{"proxy_set_headers forwarding", func(e *config.ExternalAuth) { e.ProxySetHeaders = map[string]string{"X-Real-IP": "1.2.3.4"} }, false,
			[]wantErr{{E + ".proxy_set_headers.X-Real-IP", "ramjetd sets it"}}},
		{"proxy_set_headers value", func(e *config.ExternalAuth) { e.ProxySetHeaders = map[string]string{"X-A": "a\rb"} }, false,
			[]wantErr{{E + ".proxy_set_headers.X-A", "control characters"}}},
		{"proxy_set_headers variables", func(e *config.ExternalAuth) { e.ProxySetHeaders = map[string]string{"X-A": "$host $remote_addr"} }, false, nil},
		{"proxy_set_headers unknown variable", func(e *config.ExternalAuth) { e.ProxySetHeaders = map[string]string{"X-A": "$cookie_session"} }, false,
			[]wantErr{{E + ".proxy_set_headers.X-A", "cookie_session"}}},
		{"response_headers bad name", func(e *config.ExternalAuth) { e.ResponseHeaders = []string{"X-A", "X B"} }, false,
			[]wantErr{{E + ".response_headers[1]", ""}}},
		{"response_headers Content-Length", func(e *config.ExternalAuth) { e.ResponseHeaders = []string{"Content-Length"} }, false,
			[]wantErr{{E + ".response_headers[0]", "decides the framing"}}},
		{"response_headers with _", func(e *config.ExternalAuth) { e.ResponseHeaders = []string{"X_User"} }, false,
			[]wantErr{{E + ".response_headers[0]", "headers with '_' are not forwarded"}}},
		{"signin_url not a URL", func(e *config.ExternalAuth) { e.SigninURL = "login" }, false, []wantErr{{E + ".signin_url", "must be an http or https URL"}}},
		{"signin_redirect_param", func(e *config.ExternalAuth) { e.SigninRedirectParam = "a&b" }, false, []wantErr{{E + ".signin_redirect_param", "is not a query parameter name"}}},
		{"timeouts", func(e *config.ExternalAuth) {
			e.Timeouts = &config.Timeouts{Connect: config.Duration(time.Hour), Response: config.Duration(48 * time.Hour)}
		}, false, []wantErr{{E + ".timeouts.connect", "must be at most 5m"}, {E + ".timeouts.response", "must be at most 24h"}}},
		{"cache without key", func(e *config.ExternalAuth) { e.Cache = &config.AuthCache{} }, false, []wantErr{{E + ".cache.key", "is required"}}},
		{"cache key part unknown", func(e *config.ExternalAuth) { e.Cache.Key = []string{"host", "$remote_user"} }, false,
			[]wantErr{{E + ".cache.key[1]", `"$remote_user" is not a key part`}}},
		{"cache key cookie without name", func(e *config.ExternalAuth) { e.Cache.Key = []string{"cookie:"} }, false,
			[]wantErr{{E + ".cache.key[0]", "is not a key part"}}},
		{"cache durations and entries", func(e *config.ExternalAuth) {
			e.Cache.Forbidden = config.Duration(25 * time.Hour)
			e.Cache.MaxEntries = config.MaxAuthCacheEntries + 1
		}, false, []wantErr{{E + ".cache.forbidden", "must be 0..24h"}, {E + ".cache.max_entries", "must be 0..1000000"}}},
		{"keepalive", func(e *config.ExternalAuth) {
			e.Keepalive = &config.AuthKeepalive{Connections: -1, Requests: -1, IdleTimeout: config.Duration(2 * time.Hour)}
		}, false, []wantErr{{E + ".keepalive.connections", "must be 0..10000"}, {E + ".keepalive.requests", "must be 0"}, {E + ".keepalive.idle_timeout", "must be 0..1h"}}},
		{"tls on http", func(e *config.ExternalAuth) { e.URL = "http://auth/" }, false, []wantErr{{E + ".tls", "only applies to an https url"}}},
		{"tls skip verify with a CA", func(e *config.ExternalAuth) { e.TLS.InsecureSkipVerify = true }, false, []wantErr{{E + ".tls.ca_file", "is not used with insecure_skip_verify"}}},
		{"tls server_name", func(e *config.ExternalAuth) { e.TLS.ServerName = "a..b" }, false, []wantErr{{E + ".tls.server_name", ""}}},
		{"tls server_name wildcard", func(e *config.ExternalAuth) { e.TLS.ServerName = "*.example.com" }, false, []wantErr{{E + ".tls.server_name", "not a wildcard"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			c.Server.Admin.AllowLoopbackMembers = tc.loopback
			e := valid()
			tc.mutate(e)
			policies(c).ExternalAuth = e
			checkFieldErrors(t, c.Validate(), tc.want)
		})
	}
}

func TestAuthCacheDurations(t *testing.T) {
	tests := []struct {
		name  string
		cache config.AuthCache
		want  [3]time.Duration
	}{
		{"ingress-nginx's default", config.AuthCache{}, [3]time.Duration{5 * time.Minute, 5 * time.Minute, 0}},
		{"given", config.AuthCache{Forbidden: config.Duration(time.Second)}, [3]time.Duration{0, 0, time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, u, f := tt.cache.Durations()
			if got := [3]time.Duration{a, u, f}; got != tt.want {
				t.Errorf("Durations() = %v, want %v", got, tt.want)
			}
		})
	}
}
