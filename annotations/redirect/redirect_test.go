package redirect_test

import (
	"strings"
	"testing"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

const (
	permanent     = registry.Prefix + "permanent-redirect"
	permanentCode = registry.Prefix + "permanent-redirect-code"
	temporal      = registry.Prefix + "temporal-redirect"
	temporalCode  = registry.Prefix + "temporal-redirect-code"
)

func TestApply(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		want        *config.Redirect // nil: no redirect, the paths reach their backend
		// findings are substrings of the expected findings, in order.
		findings []string
	}{
		{name: "none", annotations: map[string]string{}},

		// permanent-redirect
		{name: "permanent default code", annotations: map[string]string{permanent: "https://new.example.com/"},
			want: &config.Redirect{URL: "https://new.example.com/", Code: 301}},
		{name: "permanent with code", annotations: map[string]string{permanent: "https://new.example.com/", permanentCode: "308"},
			want: &config.Redirect{URL: "https://new.example.com/", Code: 308}},
		{name: "permanent codes 302 303 307", annotations: map[string]string{permanent: "http://a.test", permanentCode: "307"},
			want: &config.Redirect{URL: "http://a.test", Code: 307}},
		{name: "permanent code with whitespace", annotations: map[string]string{permanent: "http://a.test", permanentCode: " 303 "},
			want: &config.Redirect{URL: "http://a.test", Code: 303}},
		{name: "permanent URL trimmed", annotations: map[string]string{permanent: "  https://a.test/x  "},
			want: &config.Redirect{URL: "https://a.test/x", Code: 301}},
		{name: "permanent URL literal with query, fragment, escapes", annotations: map[string]string{permanent: "https://a.test/a%20b/c+d?x=1&y=@2#top"},
			want: &config.Redirect{URL: "https://a.test/a%20b/c+d?x=1&y=@2#top", Code: 301}},
		{name: "permanent upper-case scheme, port, IPv6", annotations: map[string]string{permanent: "HTTPS://[2001:db8::1]:8443/x"},
			want: &config.Redirect{URL: "HTTPS://[2001:db8::1]:8443/x", Code: 301}},
		{name: "permanent path", annotations: map[string]string{permanent: "/new/place?from=old"},
			want: &config.Redirect{URL: "/new/place?from=old", Code: 301}},
		{name: "permanent code 300 falls back to 301", annotations: map[string]string{permanent: "https://a.test", permanentCode: "300"},
			want:     &config.Redirect{URL: "https://a.test", Code: 301},
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/permanent-redirect-code: "300" is not a redirect code this key takes (301, 302, 303, 307, 308); the key is ignored`}},
		{name: "permanent code 304", annotations: map[string]string{permanent: "https://a.test", permanentCode: "304"},
			want: &config.Redirect{URL: "https://a.test", Code: 301}, findings: []string{`permanent-redirect-code: "304" is not a redirect code`}},
		{name: "permanent code 200", annotations: map[string]string{permanent: "https://a.test", permanentCode: "200"},
			want: &config.Redirect{URL: "https://a.test", Code: 301}, findings: []string{`permanent-redirect-code: "200" is not a redirect code`}},
		{name: "permanent code not a number", annotations: map[string]string{permanent: "https://a.test", permanentCode: "moved"},
			want: &config.Redirect{URL: "https://a.test", Code: 301}, findings: []string{`permanent-redirect-code: "moved" is not a redirect code`}},
		{name: "permanent code alone does nothing", annotations: map[string]string{permanentCode: "308"},
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/permanent-redirect-code: does nothing without a valid nginx.ingress.kubernetes.io/permanent-redirect; the key is ignored`}},

		// temporal-redirect
		{name: "temporal default code", annotations: map[string]string{temporal: "https://maintenance.example.com"},
			want: &config.Redirect{URL: "https://maintenance.example.com", Code: 302}},
		{name: "temporal with code", annotations: map[string]string{temporal: "https://m.test", temporalCode: "307"},
			want: &config.Redirect{URL: "https://m.test", Code: 307}},
		{name: "temporal code 301 as ingress-nginx", annotations: map[string]string{temporal: "https://m.test", temporalCode: "301"},
			want: &config.Redirect{URL: "https://m.test", Code: 301}},
		{name: "temporal code 308 falls back to 302", annotations: map[string]string{temporal: "https://m.test", temporalCode: "308"},
			want:     &config.Redirect{URL: "https://m.test", Code: 302},
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/temporal-redirect-code: "308" is not a redirect code this key takes (301, 302, 303, 307); the key is ignored`}},
		{name: "temporal code alone does nothing", annotations: map[string]string{temporalCode: "307"},
			findings: []string{`temporal-redirect-code: does nothing without a valid nginx.ingress.kubernetes.io/temporal-redirect`}},
		{name: "temporal path refused", annotations: map[string]string{temporal: "/maintenance"},
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/temporal-redirect: "/maintenance" must be an absolute http or https URL; the key is ignored`}},

		// precedence
		{name: "temporal wins over permanent", annotations: map[string]string{temporal: "https://t.test", permanent: "https://p.test", permanentCode: "308"},
			want:     &config.Redirect{URL: "https://t.test", Code: 302},
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/permanent-redirect and nginx.ingress.kubernetes.io/permanent-redirect-code are ignored: nginx.ingress.kubernetes.io/temporal-redirect is also set and wins, as in ingress-nginx`}},
		{name: "temporal wins over a lone permanent code", annotations: map[string]string{temporal: "https://t.test", permanentCode: "308"},
			want:     &config.Redirect{URL: "https://t.test", Code: 302},
			findings: []string{`nginx.ingress.kubernetes.io/permanent-redirect-code is ignored: nginx.ingress.kubernetes.io/temporal-redirect is also set`}},
		{name: "invalid temporal leaves permanent", annotations: map[string]string{temporal: "https://t.test$request_uri", temporalCode: "307", permanent: "https://p.test"},
			want: &config.Redirect{URL: "https://p.test", Code: 301},
			findings: []string{
				`temporal-redirect: "https://t.test$request_uri" holds the nginx variable $request_uri`,
				`temporal-redirect-code: does nothing without a valid nginx.ingress.kubernetes.io/temporal-redirect`,
			}},
		{name: "permanent with a temporal code", annotations: map[string]string{permanent: "https://p.test", temporalCode: "307"},
			want:     &config.Redirect{URL: "https://p.test", Code: 301},
			findings: []string{`temporal-redirect-code: does nothing without a valid`}},

		// invalid URLs: ignored, the paths reach their backend
		{name: "request_uri", annotations: map[string]string{permanent: "https://new.example.com$request_uri"},
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/permanent-redirect: "https://new.example.com$request_uri" holds the nginx variable $request_uri: Ramjet does not interpolate nginx variables; the URL is used literally, without the request's path; the key is ignored`}},
		{name: "braced variable", annotations: map[string]string{permanent: "https://${host}/x"},
			findings: []string{`holds the nginx variable ${host}: Ramjet does not interpolate nginx variables`}},
		{name: "capture", annotations: map[string]string{permanent: "https://a.test/$1"},
			findings: []string{`holds the nginx variable $1`}},
		{name: "lone dollar", annotations: map[string]string{permanent: "https://a.test/$"},
			findings: []string{`"https://a.test/$" holds $: Ramjet does not interpolate nginx variables`}},
		{name: "no scheme", annotations: map[string]string{permanent: "new.example.com"},
			findings: []string{`permanent-redirect: "new.example.com" must be an absolute http or https URL, or a path starting with /; the key is ignored`}},
		{name: "other scheme", annotations: map[string]string{permanent: "ftp://a.test/x"},
			findings: []string{`"ftp://a.test/x" must be an absolute http or https URL`}},
		{name: "javascript", annotations: map[string]string{temporal: "javascript:alert(1)"},
			findings: []string{`"javascript:alert(1)" must be an absolute http or https URL`}},
		{name: "no host", annotations: map[string]string{permanent: "https:///x"},
			findings: []string{`"https:///x" has no host`}},
		{name: "opaque", annotations: map[string]string{permanent: "https:a.test"},
			findings: []string{`"https:a.test" has no host`}},
		{name: "scheme-relative", annotations: map[string]string{permanent: "//evil.test/x"},
			findings: []string{`"//evil.test/x" starts with //, which clients read as another host`}},
		{name: "backslash", annotations: map[string]string{permanent: `/\evil.test`},
			findings: []string{`holds '\\', which a URL cannot hold unencoded`}},
		{name: "space", annotations: map[string]string{permanent: "https://a.test/a b"},
			findings: []string{`holds whitespace; percent-encode a space as %20`}},
		{name: "non-ASCII", annotations: map[string]string{permanent: "https://bücher.test/"},
			findings: []string{`holds characters outside ASCII`}},
		{name: "bad escape", annotations: map[string]string{permanent: "https://a.test/100%"},
			findings: []string{`"https://a.test/100%" is not a URL`}},
		{name: "bad port", annotations: map[string]string{permanent: "https://a.test:http/"},
			findings: []string{`is not a URL`}},
		{name: "empty", annotations: map[string]string{permanent: ""},
			findings: []string{`permanent-redirect: "" must be an absolute http or https URL`}},
		{name: "control characters", annotations: map[string]string{permanent: "https://a.test/\r\nSet-Cookie: x=1"},
			findings: []string{`permanent-redirect: the value holds control characters`}},
		{name: "invalid URL with its code", annotations: map[string]string{permanent: "ok.test", permanentCode: "308"},
			findings: []string{`permanent-redirect: "ok.test" must be`, `permanent-redirect-code: does nothing without a valid`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			applied := registry.Apply(registry.All(), core.Origin{Kind: "Ingress", Namespace: "app", Name: "web"}, tc.annotations, nil)
			got := applied.Settings.Redirect
			switch {
			case tc.want == nil && got != nil:
				t.Errorf("redirect = %+v, want none", *got)
			case tc.want != nil && (got == nil || *got != *tc.want):
				t.Errorf("redirect = %+v, want %+v", got, *tc.want)
			}
			if applied.Refused {
				t.Error("the object is refused; redirect never refuses")
			}
			checkFindings(t, applied.Findings, tc.findings)
			if got != nil {
				checkServable(t, got)
			}
		})
	}
}

// checkServable checks that the data plane accepts the redirect the family
// made: a valid value never makes the configuration invalid.
func checkServable(t *testing.T, r *config.Redirect) {
	t.Helper()
	tenant := &config.Tenant{
		Applications: map[string]*config.Application{"a": {
			Domains: []string{"a.test"},
			Routes:  []*config.Route{{Match: config.Match{Path: config.PathMatch{Prefix: "/"}}, Action: config.Action{Redirect: r}}},
		}},
	}
	cfg := &config.Config{
		Server:  config.Server{Listeners: map[string]*config.Listener{"http": {Address: ":80"}}},
		Tenants: map[string]*config.Tenant{"t": tenant},
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("the data plane refuses the redirect %+v: %v", *r, err)
	}
}

func checkFindings(t *testing.T, findings []core.Finding, want []string) {
	t.Helper()
	if len(findings) != len(want) {
		t.Fatalf("findings = %v, want %d: %q", findings, len(want), want)
	}
	for i, f := range findings {
		if got := string(f.Reason) + ": " + f.Message; !strings.Contains(got, want[i]) {
			t.Errorf("finding %d = %q, want it to contain %q", i, got, want[i])
		}
	}
}
