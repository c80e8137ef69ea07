package config_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// policies returns the policies of the base's route, creating them.
func policies(c *config.Config) *config.Policies {
	if route(c).Policies == nil {
		route(c).Policies = &config.Policies{}
	}
	return route(c).Policies
}

func TestValidatePolicies(t *testing.T) {
	const A = "tenants.t.applications.app"
	const P = A + ".routes[0].policies"
	size := func(n int64) *config.ByteSize { b := config.ByteSize(n); return &b }
	many := make([]string, config.MaxSourceRanges+1)
	for i := range many {
		many[i] = fmt.Sprintf("10.0.%d.%d", i/256, i%256)
	}
	tests := []struct {
		name   string
		mutate func(c *config.Config)
		want   []wantErr
	}{
		{"every policy valid", func(c *config.Config) {
			match(c).Path = config.PathMatch{Regex: "/api/(.*)"}
			app(c).AppRoot = "/home"
			*policies(c) = config.Policies{
				Allow: []string{"10.0.0.0/8", " 2001:db8::/32 ", "192.0.2.1"},
				Deny:  []string{"10.9.0.0/16"},
				CORS: &config.CORS{
					AllowOrigins: []string{"https://a.test", "https://*.b.test:8443"}, AllowCredentials: true,
					AllowMethods: []string{"GET", "PROPFIND"}, AllowHeaders: []string{"X-Token"}, ExposeHeaders: []string{"*"},
					MaxAge: config.Duration(time.Hour),
				},
				BasicAuth:       &config.BasicAuth{File: "/etc/ramjet/htpasswd", Realm: "Staff only"},
				MaxBody:         size(0),
				Rewrite:         &config.Rewrite{Path: "/$1", Host: "api.internal:8080"},
				RequestHeaders:  &config.HeaderChanges{Set: []config.Header{{Name: "X-Env", Value: "prod"}}, Remove: []string{"X-Debug"}},
				ResponseHeaders: &config.HeaderChanges{Add: []config.Header{{Name: "Cache-Control", Value: "no-store"}}},
				Timeouts:        &config.Timeouts{Connect: config.Duration(time.Second), Response: config.Duration(time.Minute)},
			}
		}, nil},
		{"app_root not a path", func(c *config.Config) { app(c).AppRoot = "https://x.test/" },
			[]wantErr{{A + ".app_root", "must be a path starting with a single /"}}},
		{"app_root protocol-relative", func(c *config.Config) { app(c).AppRoot = "//evil.test" },
			[]wantErr{{A + ".app_root", "must be a path starting with a single /"}}},
		{"app_root with CRLF", func(c *config.Config) { app(c).AppRoot = "/a\r\nSet-Cookie: x" },
			[]wantErr{{A + ".app_root", "must not hold control characters"}}},
		{"policies on a redirect action", func(c *config.Config) {
			*action(c) = config.Action{Redirect: &config.Redirect{URL: "https://x.test/"}}
			policies(c).Deny = []string{"0.0.0.0/0"}
		}, []wantErr{{P, "a redirect answers before any policy runs"}}},
		{"no policies on a redirect action", func(c *config.Config) {
			*action(c) = config.Action{Redirect: &config.Redirect{URL: "https://x.test/"}}
			route(c).Policies = &config.Policies{}
		}, nil},
		{"rewrite, request headers and timeouts on a fixed response", func(c *config.Config) {
			*action(c) = config.Action{Respond: &config.Respond{Status: 200}}
			p := policies(c)
			p.Rewrite = &config.Rewrite{Path: "/x"}
			p.RequestHeaders = &config.HeaderChanges{Remove: []string{"X-A"}}
			p.Timeouts = &config.Timeouts{Connect: config.Duration(time.Second)}
			p.BasicAuth = &config.BasicAuth{File: "/f"}
		}, []wantErr{
			{P + ".rewrite", "a fixed response sends nothing to a member to rewrite"},
			{P + ".request_headers", "a fixed response sends nothing to a member"},
			{P + ".timeouts", "a fixed response waits for no member"},
		}},
		{"allow entry bad", func(c *config.Config) { policies(c).Allow = []string{"10.0.0.0/8", "10.0.0.300"} },
			[]wantErr{{P + ".allow[1]", `"10.0.0.300" is neither an address nor a CIDR`}}},
		{"deny entry bad", func(c *config.Config) { policies(c).Deny = []string{"10.0.0.0/33"} },
			[]wantErr{{P + ".deny[0]", `"10.0.0.0/33" is not a CIDR`}}},
		{"allow over 1024 entries", func(c *config.Config) { policies(c).Allow = many },
			[]wantErr{{P + ".allow", "at most 1024 entries, got 1025"}}},
		{"allow of 1024 entries", func(c *config.Config) { policies(c).Allow = many[:1024] }, nil},
		{"cors origin with a path", func(c *config.Config) {
			policies(c).CORS = &config.CORS{AllowOrigins: []string{"https://a.test/path"}}
		}, []wantErr{{P + ".cors.allow_origins[0]", `"https://a.test/path" is not an origin`}}},
		{"cors origin without scheme", func(c *config.Config) {
			policies(c).CORS = &config.CORS{AllowOrigins: []string{"a.test"}}
		}, []wantErr{{P + ".cors.allow_origins[0]", "is not an origin"}}},
		{"cors wildcard not first", func(c *config.Config) {
			policies(c).CORS = &config.CORS{AllowOrigins: []string{"https://a.*.test"}}
		}, []wantErr{{P + ".cors.allow_origins[0]", "is not an origin"}}},
		{"cors credentials with the default origin", func(c *config.Config) {
			policies(c).CORS = &config.CORS{AllowCredentials: true}
		}, []wantErr{{P + ".cors.allow_credentials", `credentials cannot be allowed for the origin "*"`}}},
		{"cors credentials with the null origin", func(c *config.Config) {
			policies(c).CORS = &config.CORS{AllowOrigins: []string{"https://a.test", "null"}, AllowCredentials: true}
		}, []wantErr{{P + ".cors.allow_credentials", `credentials cannot be allowed for the origin "null"`}}},
		{"cors credentials with * in a list", func(c *config.Config) {
			policies(c).CORS = &config.CORS{AllowOrigins: []string{"https://a.test", "*"}, AllowCredentials: true}
		}, []wantErr{{P + ".cors.allow_credentials", "credentials cannot be allowed"}}},
		{"cors method with a space", func(c *config.Config) {
			policies(c).CORS = &config.CORS{AllowMethods: []string{"GET PUT"}}
		}, []wantErr{{P + ".cors.allow_methods[0]", `"GET PUT" is not a method`}}},
		{"cors header with CRLF", func(c *config.Config) {
			policies(c).CORS = &config.CORS{AllowHeaders: []string{"X-A\r\nX-B"}}
		}, []wantErr{{P + ".cors.allow_headers[0]", "is not a header name"}}},
		{"cors * in allow_headers (the CORS wildcard)", func(c *config.Config) {
			policies(c).CORS = &config.CORS{AllowHeaders: []string{"*"}}
		}, nil},
		{"cors max_age over a year", func(c *config.Config) {
			policies(c).CORS = &config.CORS{MaxAge: config.Duration(400 * 24 * time.Hour)}
		}, []wantErr{{P + ".cors.max_age", "must be at most"}}},
		{"satisfy not a value", func(c *config.Config) { policies(c).Satisfy = "Any" },
			[]wantErr{{P + ".satisfy", `must be "all" or "any", not "Any"`}}},
		{"satisfy any with basic and external authentication", func(c *config.Config) {
			policies(c).Satisfy = config.SatisfyAny
			policies(c).BasicAuth = &config.BasicAuth{File: "/etc/ramjet/htpasswd"}
			policies(c).ExternalAuth = &config.ExternalAuth{URL: "http://auth.example.com/check"}
		}, []wantErr{{P + ".satisfy", "any with both basic_auth and external_auth is not provided"}}},
		{"basic_auth without file", func(c *config.Config) { policies(c).BasicAuth = &config.BasicAuth{} },
			[]wantErr{{P + ".basic_auth.file", "is required"}}},
		{"basic_auth realm with a quote", func(c *config.Config) {
			policies(c).BasicAuth = &config.BasicAuth{File: "/f", Realm: `a"b`}
		}, []wantErr{{P + ".basic_auth.realm", `must not hold " or \`}}},
		{"basic_auth realm with LF", func(c *config.Config) {
			policies(c).BasicAuth = &config.BasicAuth{File: "/f", Realm: "a\nb"}
		}, []wantErr{{P + ".basic_auth.realm", "must not hold control characters"}}},
		{"max_body negative", func(c *config.Config) { policies(c).MaxBody = size(-1) },
			[]wantErr{{P + ".max_body", "must be 0 (no limit) or more"}}},
		{"rewrite empty", func(c *config.Config) { policies(c).Rewrite = &config.Rewrite{} },
			[]wantErr{{P + ".rewrite", "path, path_prefix or host is required"}}},
		{"rewrite forwarded_prefix without path", func(c *config.Config) { policies(c).Rewrite = &config.Rewrite{Host: "b.test", ForwardedPrefix: "/api"} },
			[]wantErr{{P + ".rewrite.forwarded_prefix", "requires path"}}},
		{"rewrite forwarded_prefix with a line break", func(c *config.Config) {
			policies(c).Rewrite = &config.Rewrite{Path: "/", ForwardedPrefix: "/a\nX-Evil: 1"}
		},
			[]wantErr{{P + ".rewrite.forwarded_prefix", "must not hold control characters"}}},
		{"rewrite forwarded_prefix submatch on a prefix route", func(c *config.Config) { policies(c).Rewrite = &config.Rewrite{Path: "/", ForwardedPrefix: "/$1"} },
			[]wantErr{{P + ".rewrite.forwarded_prefix", "$1..$9 refer to the submatches of a regex route"}}},
		{"rewrite forwarded_prefix submatch the regex lacks", func(c *config.Config) {
			match(c).Path = config.PathMatch{Regex: "/(api)/.*"}
			policies(c).Rewrite = &config.Rewrite{Path: "/$1", ForwardedPrefix: "/$2"}
		}, []wantErr{{P + ".rewrite.forwarded_prefix", "$2 refers to a submatch the route's regex does not have (it has 1)"}}},
		{"rewrite forwarded_prefix", func(c *config.Config) {
			match(c).Path = config.PathMatch{Regex: "/(api)/(.*)"}
			policies(c).Rewrite = &config.Rewrite{Path: "/$2", ForwardedPrefix: "/$1"}
		}, nil},
		{"rewrite path_prefix empty strips the prefix", func(c *config.Config) { policies(c).Rewrite = &config.Rewrite{PathPrefix: new("")} }, nil},
		{"rewrite path_prefix relative", func(c *config.Config) { policies(c).Rewrite = &config.Rewrite{PathPrefix: new("x")} },
			[]wantErr{{P + ".rewrite.path_prefix", "must start with /"}}},
		{"rewrite path and path_prefix", func(c *config.Config) { policies(c).Rewrite = &config.Rewrite{Path: "/a", PathPrefix: new("/b")} },
			[]wantErr{{P + ".rewrite", "path and path_prefix exclude each other"}}},
		{"rewrite path_prefix on a regex route", func(c *config.Config) {
			match(c).Path = config.PathMatch{Regex: "/api/.*"}
			policies(c).Rewrite = &config.Rewrite{PathPrefix: new("/b")}
		}, []wantErr{{P + ".rewrite.path_prefix", "this route's path match is not a prefix"}}},
		{"rewrite path relative", func(c *config.Config) { policies(c).Rewrite = &config.Rewrite{Path: "x"} },
			[]wantErr{{P + ".rewrite.path", "must start with /"}}},
		{"rewrite path with a query", func(c *config.Config) { policies(c).Rewrite = &config.Rewrite{Path: "/x?a=1"} },
			[]wantErr{{P + ".rewrite.path", "must not hold '?' or '#'"}}},
		{"rewrite captures on a prefix route", func(c *config.Config) { policies(c).Rewrite = &config.Rewrite{Path: "/$1"} },
			[]wantErr{{P + ".rewrite.path", "$1..$9 refer to the submatches of a regex route"}}},
		{"rewrite without captures on a prefix route", func(c *config.Config) { policies(c).Rewrite = &config.Rewrite{Path: "/fixed"} }, nil},
		{"rewrite host invalid", func(c *config.Config) { policies(c).Rewrite = &config.Rewrite{Host: "a b"} },
			[]wantErr{{P + ".rewrite.host", `"a b" is not host or host:port`}}},
		{"rewrite host wildcard", func(c *config.Config) { policies(c).Rewrite = &config.Rewrite{Host: "*.a.test"} },
			[]wantErr{{P + ".rewrite.host", "is a wildcard"}}},
		{"rewrite host IPv6 with port", func(c *config.Config) { policies(c).Rewrite = &config.Rewrite{Host: "[::1]:8080"} }, nil},
		{"rewrite host IPv6 without brackets", func(c *config.Config) { policies(c).Rewrite = &config.Rewrite{Host: "::1"} },
			[]wantErr{{P + ".rewrite.host", `"::1" is not host or host:port (an IPv6 address goes in brackets)`}}},
		{"rewrite host with a bad port", func(c *config.Config) { policies(c).Rewrite = &config.Rewrite{Host: "a.test:b"} },
			[]wantErr{{P + ".rewrite.host", "the port must be 1..65535"}}},
		{"rewrite host with port 0", func(c *config.Config) { policies(c).Rewrite = &config.Rewrite{Host: "a.test:0"} },
			[]wantErr{{P + ".rewrite.host", "the port must be 1..65535"}}},
		{"rewrite to a group the regex lacks", func(c *config.Config) {
			match(c).Path = config.PathMatch{Regex: "/api/(.*)"}
			policies(c).Rewrite = &config.Rewrite{Path: "/$1/$2"}
		}, []wantErr{{P + ".rewrite.path", "$2 refers to a submatch the route's regex does not have (it has 1)"}}},
		{"rewrite to groups the regex has", func(c *config.Config) {
			match(c).Path = config.PathMatch{Regex: "/api/(?:x)?(v[0-9])/(.*)"}
			policies(c).Rewrite = &config.Rewrite{Path: "/$2/$1"}
		}, nil},
		{"request header name invalid", func(c *config.Config) {
			policies(c).RequestHeaders = &config.HeaderChanges{Set: []config.Header{{Name: "X A", Value: "v"}}}
		}, []wantErr{{P + ".request_headers.set[0].name", "is not a valid header name"}}},
		{"request header value with CR", func(c *config.Config) {
			policies(c).RequestHeaders = &config.HeaderChanges{Add: []config.Header{{Name: "X-A", Value: "a\rb"}}}
		}, []wantErr{{P + ".request_headers.add[0].value", "must not hold control characters"}}},
		{"request header Host", func(c *config.Config) {
			policies(c).RequestHeaders = &config.HeaderChanges{Set: []config.Header{{Name: "host", Value: "x"}}}
		}, []wantErr{{P + ".request_headers.set[0].name", "host cannot be changed"}}},
		{"request header X-Forwarded-For", func(c *config.Config) {
			policies(c).RequestHeaders = &config.HeaderChanges{Set: []config.Header{{Name: "x-forwarded-for", Value: "6.6.6.6"}}}
		}, []wantErr{{P + ".request_headers.set[0].name", "ramjetd sets it from what it knows of the client"}}},
		{"request header X-Request-Id added", func(c *config.Config) {
			policies(c).RequestHeaders = &config.HeaderChanges{Add: []config.Header{{Name: "X-Request-Id", Value: "fixed"}}}
		}, []wantErr{{P + ".request_headers.add[0].name", "X-Request-Id cannot be changed"}}},
		{"request header with an underscore", func(c *config.Config) {
			policies(c).RequestHeaders = &config.HeaderChanges{Set: []config.Header{{Name: "X_Env", Value: "v"}}}
		}, []wantErr{{P + ".request_headers.set[0].name", "headers with '_' are not forwarded"}}},
		{"response header X-Request-Id may be set", func(c *config.Config) {
			policies(c).ResponseHeaders = &config.HeaderChanges{Set: []config.Header{{Name: "X-Request-Id", Value: "v"}}}
		}, nil},
		{"response header Content-Length removed", func(c *config.Config) {
			policies(c).ResponseHeaders = &config.HeaderChanges{Remove: []string{"Content-Length"}}
		}, []wantErr{{P + ".response_headers.remove[0]", "Content-Length cannot be changed"}}},
		{"timeouts too long", func(c *config.Config) {
			policies(c).Timeouts = &config.Timeouts{Connect: config.Duration(6 * time.Minute), Response: config.Duration(25 * time.Hour)}
		}, []wantErr{{P + ".timeouts.connect", "must be at most 5m"}, {P + ".timeouts.response", "must be at most 24h"}}},
		{"request and backend_request timeouts", func(c *config.Config) {
			policies(c).Timeouts = &config.Timeouts{Request: config.Duration(10 * time.Second), BackendRequest: config.Duration(500 * time.Millisecond)}
		}, nil},
		{"backend_request without request", func(c *config.Config) {
			policies(c).Timeouts = &config.Timeouts{BackendRequest: config.Duration(time.Hour)}
		}, nil},
		{"backend_request over request", func(c *config.Config) {
			policies(c).Timeouts = &config.Timeouts{Request: config.Duration(time.Second), BackendRequest: config.Duration(2 * time.Second)}
		}, []wantErr{{P + ".timeouts.backend_request", "must be at most request (1s)"}}},
		{"request timeout negative", func(c *config.Config) {
			policies(c).Timeouts = &config.Timeouts{Request: config.Duration(-time.Second)}
		}, []wantErr{{P + ".timeouts.request", "must be 0 (no bound) to 24h"}}},
		{"backend_request too long", func(c *config.Config) {
			policies(c).Timeouts = &config.Timeouts{BackendRequest: config.Duration(25 * time.Hour)}
		}, []wantErr{{P + ".timeouts.backend_request", "must be 0 (no bound) to 24h"}}},
		{"mirrors", func(c *config.Config) {
			policies(c).Mirrors = []config.Mirror{{Pool: "p"}, {Pool: "p", Fraction: &config.Fraction{Numerator: 50}}, {Pool: "p", Fraction: &config.Fraction{Numerator: 1, Denominator: 1000}}}
		}, nil},
		{"mirror to an unknown pool", func(c *config.Config) { policies(c).Mirrors = []config.Mirror{{Pool: "nope"}} },
			[]wantErr{{P + ".mirrors[0].pool", `no pool "nope" in this tenant`}}},
		{"mirror fraction over 100 percent", func(c *config.Config) {
			policies(c).Mirrors = []config.Mirror{{Pool: "p", Fraction: &config.Fraction{Numerator: 101}}}
		}, []wantErr{{P + ".mirrors[0].fraction.numerator", "must be at most the denominator (100)"}}},
		{"mirror denominator too large", func(c *config.Config) {
			policies(c).Mirrors = []config.Mirror{{Pool: "p", Fraction: &config.Fraction{Numerator: 1, Denominator: 1_000_001}}}
		}, []wantErr{{P + ".mirrors[0].fraction.denominator", "must be 1..1000000"}}},
		{"mirror copies with host, path, request_uri, no_body", func(c *config.Config) {
			policies(c).Mirrors = []config.Mirror{{Pool: "p", Host: "shadow.example:8080", Path: "/copy", NoBody: true}, {Pool: "p", Host: "[fd00::1]", RequestURI: true}}
		}, nil},
		{"mirror host with a path", func(c *config.Config) { policies(c).Mirrors = []config.Mirror{{Pool: "p", Host: "a.example/x"}} },
			[]wantErr{{P + ".mirrors[0].host", `"a.example/x" is not host or host:port`}}},
		{"mirror path without /", func(c *config.Config) { policies(c).Mirrors = []config.Mirror{{Pool: "p", Path: "copy"}} },
			[]wantErr{{P + ".mirrors[0].path", "must start with /"}}},
		{"mirror path with a query", func(c *config.Config) { policies(c).Mirrors = []config.Mirror{{Pool: "p", Path: "/copy?a=1"}} },
			[]wantErr{{P + ".mirrors[0].path", "must not hold a query or a fragment"}}},
		{"mirror path with control characters", func(c *config.Config) { policies(c).Mirrors = []config.Mirror{{Pool: "p", Path: "/a\r\nb"}} },
			[]wantErr{{P + ".mirrors[0].path", "must not hold control characters"}}},
		{"mirror path and request_uri", func(c *config.Config) {
			policies(c).Mirrors = []config.Mirror{{Pool: "p", Path: "/copy", RequestURI: true}}
		}, []wantErr{{P + ".mirrors[0]", "path and request_uri exclude each other"}}},
		{"too many mirrors", func(c *config.Config) {
			for range 9 {
				policies(c).Mirrors = append(policies(c).Mirrors, config.Mirror{Pool: "p"})
			}
		},
			[]wantErr{{P + ".mirrors", "at most 8 mirrors, got 9"}}},
		{"error pages", func(c *config.Config) {
			policies(c).ErrorPages = &config.ErrorPages{Statuses: []int{404, 503}, Pool: "p", FallbackPool: "p", OwnAnswersOnly: true,
				Timeout: config.Duration(time.Second), Namespace: "shop", Ingress: "web", Service: "front", ServicePort: "80"}
		}, nil},
		{"error pages fallback alone", func(c *config.Config) { policies(c).ErrorPages = &config.ErrorPages{FallbackPool: "p"} }, nil},
		{"error pages on a weighted action", func(c *config.Config) {
			route(c).Action = config.Action{Pools: []config.WeightedPool{{Pool: "p", Weight: 1}}}
			policies(c).ErrorPages = &config.ErrorPages{Statuses: []int{404}, Pool: "p", FallbackPool: "p"}
		}, nil},
		{"error pages empty", func(c *config.Config) { policies(c).ErrorPages = &config.ErrorPages{} },
			[]wantErr{{P + ".error_pages", "needs statuses and pool, or fallback_pool"}}},
		{"error pages statuses", func(c *config.Config) {
			policies(c).ErrorPages = &config.ErrorPages{Statuses: []int{404, 399, 404, 600}, Pool: "p"}
		}, []wantErr{{P + ".error_pages.statuses[1]", "must be 400..599, not 399"}, {P + ".error_pages.statuses[2]", "404 is listed twice"},
			{P + ".error_pages.statuses[3]", "must be 400..599, not 600"}}},
		{"error pages without pool", func(c *config.Config) { policies(c).ErrorPages = &config.ErrorPages{Statuses: []int{404}} },
			[]wantErr{{P + ".error_pages.pool", "is required with statuses"}}},
		{"error pages pool without statuses", func(c *config.Config) {
			policies(c).ErrorPages = &config.ErrorPages{Pool: "p", FallbackPool: "p", OwnAnswersOnly: true}
		}, []wantErr{{P + ".error_pages.statuses", "are required with pool"}, {P + ".error_pages.own_answers_only", "needs statuses"}}},
		{"error pages unknown pools", func(c *config.Config) {
			policies(c).ErrorPages = &config.ErrorPages{Statuses: []int{404}, Pool: "nope", FallbackPool: "gone"}
		}, []wantErr{{P + ".error_pages.pool", `no pool "nope" in this tenant`}, {P + ".error_pages.fallback_pool", `no pool "gone" in this tenant`}}},
		{"error pages bounds", func(c *config.Config) {
			policies(c).ErrorPages = &config.ErrorPages{Statuses: []int{404}, Pool: "p", Timeout: config.Duration(2 * time.Minute),
				Namespace: "a b", Ingress: "x\r\nSet-Cookie:", Service: strings.Repeat("s", 254), ServicePort: "é"}
		}, []wantErr{{P + ".error_pages.timeout", "must be 0 (the default, 10s) to 1m"},
			{P + ".error_pages.namespace", "must be printable ASCII without spaces"},
			{P + ".error_pages.ingress", "must be printable ASCII without spaces"},
			{P + ".error_pages.service", "must be at most 253 bytes, got 254"},
			{P + ".error_pages.service_port", "must be printable ASCII without spaces"}}},
		{"error pages on a fixed response", func(c *config.Config) {
			route(c).Action = config.Action{Respond: &config.Respond{Status: 200}}
			policies(c).ErrorPages = &config.ErrorPages{FallbackPool: "p"}
		}, []wantErr{{P + ".error_pages", "a fixed response has no member's answer to replace"}}},
		{"retry", func(c *config.Config) {
			policies(c).Retry = &config.Retry{Codes: []int{500, 502}, Attempts: intp(3), Backoff: config.Duration(100 * time.Millisecond)}
		}, nil},
		{"retry code out of range", func(c *config.Config) { policies(c).Retry = &config.Retry{Codes: []int{500, 399}} },
			[]wantErr{{P + ".retry.codes[1]", "must be 400..599, not 399"}}},
		{"retry code twice", func(c *config.Config) { policies(c).Retry = &config.Retry{Codes: []int{503, 503}} },
			[]wantErr{{P + ".retry.codes[1]", "503 is listed twice"}}},
		{"retry attempts too many", func(c *config.Config) { policies(c).Retry = &config.Retry{Attempts: intp(11)} },
			[]wantErr{{P + ".retry.attempts", "must be 0..10"}}},
		{"send timeout too long", func(c *config.Config) {
			policies(c).Timeouts = &config.Timeouts{Send: config.Duration(25 * time.Hour)}
		}, []wantErr{{P + ".timeouts.send", "must be 0 (no bound) to 24h"}}},
		{"retry within too long", func(c *config.Config) { policies(c).Retry = &config.Retry{Within: config.Duration(25 * time.Hour)} },
			[]wantErr{{P + ".retry.within", "must be 0 (no bound) to 24h"}}},
		{"rewrite rules", func(c *config.Config) {
			policies(c).ResponseRewrite = &config.ResponseRewrite{
				Redirects:   []config.TextRewrite{{From: "", To: "/"}},
				CookiePaths: []config.TextRewrite{{From: "(x", Regex: true}, {From: "^/(a)$", To: "$2", Regex: true}},
			}
		}, []wantErr{{P + ".response_rewrite.redirects[0].from", "must not be empty"},
			{P + ".response_rewrite.cookie_paths[0].from", "not a regular expression"},
			{P + ".response_rewrite.cookie_paths[1].to", "refers to $2, but from has 1 submatches"}}},
		{"buffering bounds", func(c *config.Config) {
			policies(c).Buffering = &config.Buffering{Bytes: 65<<20 + 0, HeadBytes: 100}
		}, []wantErr{{P + ".buffering.bytes", "must be 0 (the default, 1048576) to 67108864"},
			{P + ".buffering.head_bytes", "must be 0 (the default) or 1024 to 1048576"}}},
		{"retry backoff too long", func(c *config.Config) { policies(c).Retry = &config.Retry{Backoff: config.Duration(time.Hour)} },
			[]wantErr{{P + ".retry.backoff", "must be 0 to 5m"}}},
		{"retry on a fixed response", func(c *config.Config) {
			route(c).Action = config.Action{Respond: &config.Respond{Status: 200}}
			policies(c).Retry = &config.Retry{}
		}, []wantErr{{P + ".retry", "a fixed response sends nothing to a member to try again"}}},
		{"mirrors on a fixed response", func(c *config.Config) {
			route(c).Action = config.Action{Respond: &config.Respond{Status: 200}}
			policies(c).Mirrors = []config.Mirror{{Pool: "p"}}
		}, []wantErr{{P + ".mirrors", "a fixed response sends nothing to a member to copy"}}},
		{"mirrors on a redirect", func(c *config.Config) {
			route(c).Action = config.Action{Redirect: &config.Redirect{URL: "/x"}}
			policies(c).Mirrors = []config.Mirror{{Pool: "p"}}
		}, []wantErr{{P, "a redirect answers before any policy runs"}}},
		{"default route policies", func(c *config.Config) {
			app(c).DefaultRoute = &config.DefaultRoute{Action: config.Action{Pool: "p"}, Policies: &config.Policies{MaxBody: size(-5)}}
		}, []wantErr{{"tenants.t.applications.app.default_route.policies.max_body", "must be 0 (no limit) or more"}}},
		{"rate limit valid", func(c *config.Config) {
			policies(c).RateLimit = &config.RateLimit{Zone: "ns/app/uid", RPS: 10, RPSBurst: 50, RPM: 100, RPMBurst: 500, Connections: 5,
				Allowlist: []string{"10.0.0.0/8"}, Status: 429, Rate: 1 << 20, RateAfter: 1 << 10}
		}, nil},
		{"rate limit without a zone", func(c *config.Config) {
			policies(c).RateLimit = &config.RateLimit{RPS: 10}
		}, []wantErr{{P + ".rate_limit.zone", "is required with rps, rpm or connections"}}},
		{"bandwidth needs no zone", func(c *config.Config) {
			policies(c).RateLimit = &config.RateLimit{Rate: 1024}
		}, nil},
		{"rate limit bounds", func(c *config.Config) {
			policies(c).RateLimit = &config.RateLimit{Zone: "z y", RPS: config.MaxRateLimitRate + 1, RPMBurst: config.MaxRateLimitBurst + 1,
				Connections: config.MaxRateLimitConnections + 1, Allowlist: []string{"nope"}, Status: 302, Rate: -1}
		}, []wantErr{
			{P + ".rate_limit.zone", "must be printable, without spaces"},
			{P + ".rate_limit.rps", "must be at most 1000000"},
			{P + ".rate_limit.rpm_burst", "must be at most 100000000"},
			{P + ".rate_limit.connections", "must be at most 1000000"},
			{P + ".rate_limit.allowlist[0]", `"nope" is neither an address nor a CIDR`},
			{P + ".rate_limit.status", "must be 400..599 (0 means 503), not 302"},
			{P + ".rate_limit.rate", "must be 0 (no limit) or more"},
		}},
		{"rate limit on a redirect", func(c *config.Config) {
			route(c).Action = config.Action{Redirect: &config.Redirect{URL: "/x"}}
			policies(c).RateLimit = &config.RateLimit{Zone: "z", RPS: 1}
		}, []wantErr{{P, "a redirect answers before any policy runs"}}},
		{"one zone, two limits", func(c *config.Config) {
			policies(c).RateLimit = &config.RateLimit{Zone: "z", RPS: 1}
			app(c).DefaultRoute = &config.DefaultRoute{Action: config.Action{Pool: "p"}, Policies: &config.Policies{RateLimit: &config.RateLimit{Zone: "z", RPS: 2}}}
		}, []wantErr{{A + ".default_route.policies.rate_limit", `zone "z" counts other limits at ` + P + ".rate_limit"}}},
		{"zone clients", func(c *config.Config) {
			c.Server.Limits.RateLimitZoneClients = 100
		}, []wantErr{{"server.limits.rate_limit_zone_clients", "must be 1024..16777216"}}},
		{"global rate limit valid", func(c *config.Config) {
			c.Server.Memcached = &config.Memcached{Addresses: []string{"memcached.cache.svc:11211", "10.0.0.9:11211"}, Timeout: config.Duration(time.Second), PoolSize: 10}
			policies(c).GlobalRateLimit = &config.GlobalRateLimit{Namespace: "0a1b2c", Limit: 100, Window: config.Duration(time.Minute),
				Key: []config.KeyPart{{ClientAddress: true}, {Text: "-"}, {Header: "X-Api-Client"}, {Cookie: "user"}}, IgnoredRanges: []string{"10.0.0.0/8"}, Status: 503}
		}, nil},
		{"global rate limit without memcached", func(c *config.Config) {
			policies(c).GlobalRateLimit = &config.GlobalRateLimit{Namespace: "n", Limit: 1, Window: config.Duration(time.Second)}
		}, []wantErr{{P + ".global_rate_limit", "needs server.memcached"}}},
		{"global rate limit bounds", func(c *config.Config) {
			c.Server.Memcached = &config.Memcached{Addresses: []string{"x:11211"}}
			policies(c).GlobalRateLimit = &config.GlobalRateLimit{Namespace: "a/b", Limit: 0, Window: config.Duration(1500 * time.Millisecond),
				Key: []config.KeyPart{{}, {Text: "a", Header: "b"}, {Header: "a b"}, {Cookie: "c;"}, {Text: "\n"}}, IgnoredRanges: []string{"nope"}, Status: 302}
		}, []wantErr{
			{P + ".global_rate_limit.namespace", "must hold only letters, digits"},
			{P + ".global_rate_limit.limit", "must be 1..1000000000"},
			{P + ".global_rate_limit.window", "must be whole seconds, 1s..168h0m0s"},
			{P + ".global_rate_limit.key[0]", "exactly one of text, client_address, header and cookie"},
			{P + ".global_rate_limit.key[1]", "exactly one of"},
			{P + ".global_rate_limit.key[2].header", "is not a valid header name"},
			{P + ".global_rate_limit.key[3].cookie", "is not a valid cookie name"},
			{P + ".global_rate_limit.key[4].text", "must be printable"},
			{P + ".global_rate_limit.ignored_ranges[0]", `"nope" is neither an address nor a CIDR`},
			{P + ".global_rate_limit.status", "must be 400..599 (0 means 429), not 302"},
		}},
		{"memcached bounds", func(c *config.Config) {
			c.Server.Memcached = &config.Memcached{Addresses: []string{"nohost", "a b:1", "x:0"}, Timeout: config.Duration(time.Minute), PoolSize: -1}
		}, []wantErr{
			{"server.memcached.addresses[0]", "is not host:port"},
			{"server.memcached.addresses[1]", "host must be a name or an IP address"},
			{"server.memcached.addresses[2]", "port must be 1..65535"},
			{"server.memcached.timeout", "must be 0 (50ms) up to 5s"},
			{"server.memcached.pool_size", "must be 0 (50) up to 10000"},
		}},
		{"memcached without addresses", func(c *config.Config) {
			c.Server.Memcached = &config.Memcached{}
		}, []wantErr{{"server.memcached.addresses", "at least one host:port is required"}}},
		{"tenant default route policies", func(c *config.Config) {
			tenant(c).DefaultRoute = &config.DefaultRoute{Action: config.Action{Pool: "p"}, Policies: &config.Policies{Allow: []string{"x"}}}
		}, []wantErr{{"tenants.t.default_route.policies.allow[0]", `"x" is neither an address nor a CIDR`}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.mutate(c)
			checkFieldErrors(t, c.Validate(), tc.want)
		})
	}
}

func TestRewriteUsesCaptures(t *testing.T) {
	cases := map[string]bool{"/$1": true, "/a/$9/b": true, "/": false, "/$0": false, "/$x": false, "/price$": false}
	for path, want := range cases {
		if got := (&config.Rewrite{Path: path}).UsesCaptures(); got != want {
			t.Errorf("UsesCaptures(%q) = %t, want %t", path, got, want)
		}
	}
	var none *config.Rewrite
	if none.UsesCaptures() {
		t.Error("a nil rewrite uses captures")
	}
}

// TestPoliciesIsZero keeps IsZero's list of fields true: setting any one
// field of config.Policies makes it non-zero.
func TestPoliciesIsZero(t *testing.T) {
	if p := (&config.Policies{}); !p.IsZero() {
		t.Fatal("IsZero is false for the zero Policies")
	}
	typ := reflect.TypeFor[config.Policies]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		t.Run(f.Name, func(t *testing.T) {
			var p config.Policies
			v := reflect.ValueOf(&p).Elem().Field(i)
			switch f.Type.Kind() {
			case reflect.Pointer:
				v.Set(reflect.New(f.Type.Elem()))
			case reflect.Slice:
				v.Set(reflect.MakeSlice(f.Type, 1, 1))
			case reflect.String:
				v.SetString("x")
			default:
				t.Fatalf("field %s of kind %s: teach this test to set it", f.Name, f.Type.Kind())
			}
			if p.IsZero() {
				t.Errorf("IsZero is true with %s set", f.Name)
			}
		})
	}
}
