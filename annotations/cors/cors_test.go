package cors_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

func TestApply(t *testing.T) {
	const (
		p           = registry.Prefix
		enable      = p + "enable-cors"
		origin      = p + "cors-allow-origin"
		methods     = p + "cors-allow-methods"
		headers     = p + "cors-allow-headers"
		expose      = p + "cors-expose-headers"
		credentials = p + "cors-allow-credentials"
		maxAge      = p + "cors-max-age"
	)
	// on returns the annotations with enable-cors: "true" added.
	on := func(kv ...string) map[string]string {
		m := map[string]string{enable: "true"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	star := []string{"*"}
	tests := []struct {
		name        string
		annotations map[string]string
		want        *config.CORS
		// findings holds substrings of the expected findings, in order.
		findings []string
	}{
		{"defaults: *, and no credentials for *", on(), &config.CORS{AllowOrigins: star}, nil},
		{"True spelling", map[string]string{enable: "True"}, &config.CORS{AllowOrigins: star}, nil},
		{"enable-cors false", map[string]string{enable: "false"}, nil, nil},
		{"origin list: credentials by default", on(origin, "https://app.example.com, https://*.example.com:8443"),
			&config.CORS{AllowOrigins: []string{"https://app.example.com", "https://*.example.com:8443"}, AllowCredentials: true}, nil},
		{"credentials turned off", on(origin, "https://app.example.com", credentials, "false"),
			&config.CORS{AllowOrigins: []string{"https://app.example.com"}}, nil},
		{"explicit credentials", on(origin, "https://app.example.com", credentials, "true"),
			&config.CORS{AllowOrigins: []string{"https://app.example.com"}, AllowCredentials: true}, nil},
		{"* anywhere is *", on(origin, "https://app.example.com,*"), &config.CORS{AllowOrigins: star}, nil},
		{"empty entries skipped", on(origin, "https://a.example.com,,https://b.example.com,"),
			&config.CORS{AllowOrigins: []string{"https://a.example.com", "https://b.example.com"}, AllowCredentials: true}, nil},
		{"other scheme and upper-case host", on(origin, "app://Local.Example"),
			&config.CORS{AllowOrigins: []string{"app://Local.Example"}, AllowCredentials: true}, nil},
		{"explicit credentials with *", on(credentials, "true"), &config.CORS{AllowOrigins: star},
			[]string{`InvalidAnnotation: nginx.ingress.kubernetes.io/cors-allow-credentials: "true" cannot be honoured with the origin "*"`}},
		{"null takes credentials away", on(origin, "https://app.example.com, null"),
			&config.CORS{AllowOrigins: []string{"https://app.example.com", "null"}},
			[]string{`InvalidAnnotation: nginx.ingress.kubernetes.io/cors-allow-origin lists "null": credentials (on by default in ingress-nginx) are never allowed`}},
		{"null without credentials", on(origin, "null", credentials, "false"), &config.CORS{AllowOrigins: []string{"null"}}, nil},
		{"origin with a path turns CORS off", on(origin, "https://app.example.com/"), nil,
			[]string{`InvalidAnnotation: nginx.ingress.kubernetes.io/cors-allow-origin: "https://app.example.com/" is not an origin: an origin has no path, write scheme://host[:port]; CORS is off for this object`}},
		{"upper-case scheme turns CORS off", on(origin, "https://a.example.com, HTTPS://b.example.com"), nil,
			[]string{`"HTTPS://b.example.com" is not an origin: the scheme must be lower-case; CORS is off`}},
		{"no scheme turns CORS off", on(origin, "app.example.com"), nil,
			[]string{`"app.example.com" is not an origin: a scheme is required`}},
		{"wildcard of two labels turns CORS off", on(origin, "https://*.*.example.com"), nil,
			[]string{`"https://*.*.example.com" is not an origin: write scheme://host[:port], with at most *. as the first label`}},
		{"wildcard not first turns CORS off", on(origin, "https://app.*.example.com"), nil, []string{`is not an origin`}},
		{"long port turns CORS off", on(origin, "https://app.example.com:123456"), nil, []string{`is not an origin`}},
		{"empty origin turns CORS off", on(origin, " , "), nil, []string{`cors-allow-origin: " , " lists no origin; CORS is off`}},
		{"origin over 4096 bytes turns CORS off", on(origin, strings.Repeat("https://a.example.com,", 200)), nil,
			[]string{`cors-allow-origin: the value is longer than 4096 bytes`, `CORS is off for this object because nginx.ingress.kubernetes.io/cors-allow-origin is invalid`}},
		{"origins written one per line", on(origin, "https://a.example.com,\n  https://b.example.com,\r\nhttps://c.example.com\n"),
			&config.CORS{AllowOrigins: []string{"https://a.example.com", "https://b.example.com", "https://c.example.com"}, AllowCredentials: true}, nil},
		{"origins separated by line breaks alone turn CORS off", on(origin, "https://a.example.com\nhttps://b.example.com"), nil,
			[]string{`cors-allow-origin: entry 1 holds a line break: separate the entries with commas (line breaks may only surround them)`, `CORS is off for this object`}},
		{"another control character around an origin turns CORS off", on(origin, "https://a.example.com,\x00https://b.example.com"), nil,
			[]string{`cors-allow-origin: the value holds control characters`, `CORS is off for this object`}},
		{"lists written one per line", on(methods, "GET,\nPOST\n", headers, "\nX-Api-Key,\n  Content-Type\n", expose, "X-Total,\r\nX-Page"),
			&config.CORS{AllowOrigins: star, AllowMethods: []string{"GET", "POST"}, AllowHeaders: []string{"X-Api-Key", "Content-Type"}, ExposeHeaders: []string{"X-Total", "X-Page"}}, nil},
		{"methods separated by a line break alone keep the default", on(methods, "GET\nPOST"), &config.CORS{AllowOrigins: star},
			[]string{`cors-allow-methods: entry 1 holds a line break: separate the entries with commas (line breaks may only surround them); the key is ignored`}},
		{"headers separated by a line break alone keep the default", on(headers, "X-A\r\nX-B"), &config.CORS{AllowOrigins: star},
			[]string{`cors-allow-headers: entry 1 holds a line break`}},
		{"methods, headers, expose, max age",
			on(origin, "https://app.example.com", methods, "GET,POST, put", headers, "X-Api-Key, Content-Type,x_legacy", expose, "X-Total, *", maxAge, "600"),
			&config.CORS{AllowOrigins: []string{"https://app.example.com"}, AllowMethods: []string{"GET", "POST", "put"},
				AllowHeaders: []string{"X-Api-Key", "Content-Type", "x_legacy"}, ExposeHeaders: []string{"X-Total", "*"},
				AllowCredentials: true, MaxAge: config.Duration(10 * time.Minute)}, nil},
		{"lists separated by spaces", on(methods, "GET POST"), &config.CORS{AllowOrigins: star, AllowMethods: []string{"GET", "POST"}}, nil},
		{"max age Go style", on(maxAge, "24h"), &config.CORS{AllowOrigins: star, MaxAge: config.Duration(24 * time.Hour)}, nil},
		{"max age 0 is 1s", on(maxAge, "0"), &config.CORS{AllowOrigins: star, MaxAge: config.Duration(time.Second)}, nil},
		{"max age at the limit", on(maxAge, "31536000"), &config.CORS{AllowOrigins: star, MaxAge: config.Duration(365 * 24 * time.Hour)}, nil},
		{"max age over the limit keeps the default", on(maxAge, "31536001"), &config.CORS{AllowOrigins: star},
			[]string{`InvalidAnnotation: nginx.ingress.kubernetes.io/cors-max-age: "31536001" seconds is out of range`}},
		{"negative max age keeps the default", on(maxAge, "-1"), &config.CORS{AllowOrigins: star}, []string{`cors-max-age: "-1" seconds is out of range`}},
		{"invalid methods keep the default", on(methods, "GET, P0ST"), &config.CORS{AllowOrigins: star},
			[]string{`InvalidAnnotation: nginx.ingress.kubernetes.io/cors-allow-methods: "P0ST" is not a method; the key is ignored`}},
		{"empty methods keep the default", on(methods, ""), &config.CORS{AllowOrigins: star}, []string{`cors-allow-methods: "" lists no method`}},
		{"invalid headers keep the default", on(headers, "X-A, X.B"), &config.CORS{AllowOrigins: star},
			[]string{`cors-allow-headers: "X.B" is not a header name; the key is ignored`}},
		{"* is no allowed header", on(headers, "*"), &config.CORS{AllowOrigins: star}, []string{`cors-allow-headers: "*" is not a header name`}},
		{"invalid expose headers: none", on(expose, "X-A;"), &config.CORS{AllowOrigins: star}, []string{`cors-expose-headers: "X-A;" is not a header name`}},
		{"credentials not a boolean", on(origin, "https://app.example.com", credentials, "yes"),
			&config.CORS{AllowOrigins: []string{"https://app.example.com"}, AllowCredentials: true},
			[]string{`cors-allow-credentials: "yes" is not a boolean`}},
		{"keys without enable-cors", map[string]string{origin: "https://app.example.com", maxAge: "60"}, nil,
			[]string{`InvalidAnnotation: nginx.ingress.kubernetes.io/cors-allow-origin, nginx.ingress.kubernetes.io/cors-max-age: no effect without nginx.ingress.kubernetes.io/enable-cors: "true"; CORS is off for this object`}},
		{"keys with enable-cors false", map[string]string{enable: "false", methods: "GET"}, nil,
			[]string{`cors-allow-methods: no effect without nginx.ingress.kubernetes.io/enable-cors: "true"`}},
		{"enable-cors not a boolean", map[string]string{enable: "yes", origin: "*"}, nil,
			[]string{`enable-cors: "yes" is not a boolean`, `cors-allow-origin: no effect without`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			applied := registry.Apply(registry.All(), core.Origin{Kind: "Ingress", Namespace: "app", Name: "web"}, tc.annotations, nil)
			got := applied.Settings.Policies.CORS
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("cors = %+v, want %+v", got, tc.want)
			}
			if got != nil {
				checkDataPlaneAccepts(t, got)
			}
			if applied.Refused {
				t.Error("the object is refused; cors never refuses")
			}
			if len(applied.Findings) != len(tc.findings) {
				t.Fatalf("findings = %v, want %d", applied.Findings, len(tc.findings))
			}
			for i, f := range applied.Findings {
				if got := string(f.Reason) + ": " + f.Message; !strings.Contains(got, tc.findings[i]) {
					t.Errorf("finding %d = %q, want it to contain %q", i, got, tc.findings[i])
				}
			}
		})
	}
}

// checkDataPlaneAccepts validates a configuration whose one route has the
// policy: what the family renders must never make a configuration invalid.
func checkDataPlaneAccepts(t *testing.T, policy *config.CORS) {
	t.Helper()
	cfg := &config.Config{
		Server: config.Server{Listeners: map[string]*config.Listener{"http": {Address: ":80"}}},
		Tenants: map[string]*config.Tenant{"t": {
			Applications: map[string]*config.Application{"app": {
				Domains: []string{"app.example.com"},
				Routes: []*config.Route{{
					Match:    config.Match{Path: config.PathMatch{Prefix: "/"}},
					Action:   config.Action{Pool: "web"},
					Policies: &config.Policies{CORS: policy},
				}},
			}},
			Pools: map[string]*config.Pool{"web": {Members: []config.Member{{Address: "10.0.0.1:80"}}}},
		}},
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("the data plane refuses the policy %+v: %v", policy, err)
	}
}
