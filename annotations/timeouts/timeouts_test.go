package timeouts_test

import (
	"encoding/json"
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
		p       = registry.Prefix
		connect = p + "proxy-connect-timeout"
		read    = p + "proxy-read-timeout"
	)
	timeouts := func(c, r time.Duration) *config.Timeouts {
		return &config.Timeouts{Connect: config.Duration(c), Response: config.Duration(r)}
	}
	tests := []struct {
		name        string
		annotations map[string]string
		want        *config.Timeouts
		// findings holds substrings of the expected findings, in order.
		findings []string
	}{
		{"seconds", map[string]string{connect: "10", read: "120"}, timeouts(10*time.Second, 2*time.Minute), nil},
		{"Go style", map[string]string{connect: "1500ms", read: "1m30s"}, timeouts(1500*time.Millisecond, 90*time.Second), nil},
		{"whitespace", map[string]string{read: " 30 "}, timeouts(0, 30*time.Second), nil},
		{"connect only", map[string]string{connect: "2"}, timeouts(2*time.Second, 0), nil},
		{"connect at ramjetd's limit", map[string]string{connect: "300"}, timeouts(5*time.Minute, 0), nil},
		{"read at ramjetd's limit", map[string]string{read: "24h"}, timeouts(0, 24*time.Hour), nil},
		{"zero keeps the defaults", map[string]string{connect: "0", read: "0"}, nil, nil},
		{"zero beside a value", map[string]string{connect: "0", read: "5"}, timeouts(0, 5*time.Second), nil},
		{"connect over ramjetd's limit", map[string]string{connect: "301", read: "20"}, timeouts(0, 20*time.Second),
			[]string{`InvalidAnnotation: nginx.ingress.kubernetes.io/proxy-connect-timeout: "301" is more than ramjetd allows (at most 5m); the key is ignored`}},
		{"read over ramjetd's limit", map[string]string{read: "25h"}, nil,
			[]string{`proxy-read-timeout: "25h" is more than ramjetd allows (at most 24h)`}},
		{"read over the general limit", map[string]string{read: "99999999999"}, nil,
			[]string{`proxy-read-timeout: "99999999999" seconds is out of range`}},
		{"negative", map[string]string{read: "-5"}, nil, []string{`proxy-read-timeout: "-5" seconds is out of range`}},
		{"negative Go style", map[string]string{connect: "-5s"}, nil, []string{`proxy-connect-timeout: "-5s" is out of range`}},
		{"not a duration", map[string]string{connect: "5 seconds"}, nil, []string{`"5 seconds" is not a duration`}},
		{"upper-case unit", map[string]string{connect: "5S"}, nil, []string{`"5S" is not a duration`}},
		{"empty", map[string]string{read: ""}, nil, []string{`proxy-read-timeout: "" is not a duration`}},
		{"send timeout", map[string]string{p + "proxy-send-timeout": "7", read: "30"},
			&config.Timeouts{Response: config.Duration(30 * time.Second), Send: config.Duration(7 * time.Second)}, nil},
		{"send timeout over ramjetd's limit", map[string]string{p + "proxy-send-timeout": "25h"}, nil,
			[]string{`proxy-send-timeout: "25h" is more than ramjetd allows (at most 24h)`}},
		{"ignored keys, even with bad values", map[string]string{p + "proxy-buffers-number": "x", p + "proxy-http-version": "3"}, nil,
			[]string{"UnknownAnnotation: nginx.ingress.kubernetes.io/proxy-buffers-number has no counterpart in Ramjet: ramjetd has no buffers to count",
				"UnknownAnnotation: nginx.ingress.kubernetes.io/proxy-http-version has no counterpart in Ramjet: ramjetd speaks HTTP/1.1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			applied := registry.Apply(registry.All(), core.Origin{Kind: "Ingress", Namespace: "app", Name: "web"}, tc.annotations, nil)
			if got := applied.Settings.Policies.Timeouts; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("timeouts = %+v, want %+v", got, tc.want)
			}
			if applied.Refused {
				t.Error("the object is refused; timeouts never refuse")
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

// TestIgnoredKeys checks that every other key of ingress-nginx's proxy
// parser is owned by this family and ignored with its explanation.
func TestIgnoredKeys(t *testing.T) {
	for _, key := range []string{
		"proxy-buffers-number", "proxy-busy-buffers-size", "proxy-max-temp-file-size", "proxy-http-version",
	} {
		t.Run(key, func(t *testing.T) {
			if f := registry.Owner(key); f == nil || f.Name != "timeouts" {
				t.Fatalf("owner of %s = %v, want the family timeouts", key, f)
			}
			applied := registry.Apply(registry.All(), core.Origin{Kind: "Ingress", Namespace: "app", Name: "web"}, map[string]string{registry.Prefix + key: "1"}, nil)
			if len(applied.Findings) != 1 || applied.Findings[0].Reason != core.UnknownAnnotation || !strings.Contains(applied.Findings[0].Message, "has no counterpart in Ramjet: ramjetd") {
				t.Errorf("findings = %v, want one UnknownAnnotation explaining what ramjetd does", applied.Findings)
			}
			if !reflect.DeepEqual(applied.Settings, core.Settings{}) {
				t.Errorf("settings = %+v, want none", applied.Settings)
			}
		})
	}
}

func TestRetry(t *testing.T) {
	const p = registry.Prefix
	attempts := func(n int) *int { return &n }
	tests := []struct {
		name        string
		annotations map[string]string
		want        *config.Retry
		findings    []string
	}{
		{"absent", map[string]string{}, nil, nil},
		{"conditions and codes", map[string]string{p + "proxy-next-upstream": "error http_502 http_404  http_429 http_502"},
			&config.Retry{Failures: &config.RetryFailures{Error: true}, Codes: []int{404, 429, 502}, Attempts: attempts(2)}, nil},
		{"tries only: ingress-nginx's default conditions", map[string]string{p + "proxy-next-upstream-tries": "5"},
			&config.Retry{Failures: &config.RetryFailures{Error: true, Timeout: true}, Attempts: attempts(4)}, nil},
		{"no limit of tries", map[string]string{p + "proxy-next-upstream-tries": "0"},
			&config.Retry{Failures: &config.RetryFailures{Error: true, Timeout: true}, Attempts: attempts(config.MaxRetryAttempts)}, nil},
		{"more tries than ramjetd makes", map[string]string{p + "proxy-next-upstream-tries": "50"},
			&config.Retry{Failures: &config.RetryFailures{Error: true, Timeout: true}, Attempts: attempts(config.MaxRetryAttempts)}, nil},
		{"timeout", map[string]string{p + "proxy-next-upstream-timeout": "10", p + "proxy-next-upstream": "timeout invalid_header non_idempotent"},
			&config.Retry{Failures: &config.RetryFailures{Timeout: true, InvalidHeader: true}, Attempts: attempts(2), Within: config.Duration(10 * time.Second)}, nil},
		{"off", map[string]string{p + "proxy-next-upstream": "error off", p + "proxy-next-upstream-tries": "4"},
			&config.Retry{Failures: &config.RetryFailures{}, Attempts: attempts(0)}, nil},
		{"unknown condition", map[string]string{p + "proxy-next-upstream": "error http_418"}, nil,
			[]string{`InvalidAnnotation: nginx.ingress.kubernetes.io/proxy-next-upstream: "http_418" is not one of error, timeout`}},
		{"tries not a number", map[string]string{p + "proxy-next-upstream-tries": "three"}, nil,
			[]string{`proxy-next-upstream-tries: "three" is not an integer`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			applied := registry.Apply(registry.All(), core.Origin{Kind: "Ingress", Namespace: "app", Name: "web"}, tc.annotations, nil)
			if got := applied.Settings.Policies.Retry; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("retry = %s, want %s", show(got), show(tc.want))
			}
			checkFindings(t, applied, tc.findings)
		})
	}
}

func TestRewriteAndBuffering(t *testing.T) {
	const p = registry.Prefix
	tests := []struct {
		name        string
		annotations map[string]string
		rewrite     *config.ResponseRewrite
		buffering   *config.Buffering
		findings    []string
	}{
		{"redirect", map[string]string{p + "proxy-redirect-from": "http://members.internal/", p + "proxy-redirect-to": "https://app.example.com/"},
			&config.ResponseRewrite{Redirects: []config.TextRewrite{{From: "http://members.internal/", To: "https://app.example.com/"}}}, nil, nil},
		{"redirect regex", map[string]string{p + "proxy-redirect-from": "~*^http://[^/]+/(.*)$", p + "proxy-redirect-to": "/$1"},
			&config.ResponseRewrite{Redirects: []config.TextRewrite{{From: "(?i)^http://[^/]+/(.*)$", To: "/$1", Regex: true}}}, nil, nil},
		{"redirect from off", map[string]string{p + "proxy-redirect-from": "off", p + "proxy-redirect-to": "/x"}, nil, nil,
			[]string{"proxy-redirect-to: has no effect without nginx.ingress.kubernetes.io/proxy-redirect-from"}},
		{"redirect default", map[string]string{p + "proxy-redirect-from": "default"}, nil, nil, nil},
		{"redirect to off", map[string]string{p + "proxy-redirect-from": "http://a/", p + "proxy-redirect-to": "off"}, nil, nil, nil},
		{"redirect to a variable", map[string]string{p + "proxy-redirect-from": "http://a/", p + "proxy-redirect-to": "https://$host/"}, nil, nil,
			[]string{`proxy-redirect-to: "https://$host/" holds an nginx variable`}},
		{"redirect to a submatch it lacks", map[string]string{p + "proxy-redirect-from": "http://a/", p + "proxy-redirect-to": "/$1"}, nil, nil,
			[]string{`proxy-redirect-to: "/$1" refers to $1, but "http://a/" has 0 submatches`}},
		{"cookies", map[string]string{p + "proxy-cookie-domain": "localhost example.org", p + "proxy-cookie-path": "~^/app(/.*)$ $1"},
			&config.ResponseRewrite{CookieDomains: []config.TextRewrite{{From: "localhost", To: "example.org"}},
				CookiePaths: []config.TextRewrite{{From: "^/app(/.*)$", To: "$1", Regex: true}}}, nil, nil},
		{"cookie off", map[string]string{p + "proxy-cookie-domain": "off"}, nil, nil, nil},
		{"cookie one word", map[string]string{p + "proxy-cookie-path": "/x"}, nil, nil,
			[]string{`proxy-cookie-path: "/x" must be off or two words`}},
		{"cookie bad regex", map[string]string{p + "proxy-cookie-path": "~(x /"}, nil, nil,
			[]string{`proxy-cookie-path: "~(x" is not a regular expression`}},
		{"buffering", map[string]string{p + "proxy-buffering": "on", p + "proxy-request-buffering": "ON", p + "proxy-buffer-size": "16k"},
			nil, &config.Buffering{Response: true, Request: true, HeadBytes: 16 << 10}, nil},
		{"buffering off", map[string]string{p + "proxy-buffering": "off", p + "proxy-request-buffering": "off"}, nil, nil, nil},
		{"buffering bad value", map[string]string{p + "proxy-buffering": "yes"}, nil, nil,
			[]string{`proxy-buffering: "yes" is not one of on, off`}},
		{"head too small", map[string]string{p + "proxy-buffer-size": "512"}, nil, nil,
			[]string{`proxy-buffer-size: "512" is out of the range ramjetd allows (1k to 1m)`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			applied := registry.Apply(registry.All(), core.Origin{Kind: "Ingress", Namespace: "app", Name: "web"}, tc.annotations, nil)
			if got := applied.Settings.Policies.ResponseRewrite; !reflect.DeepEqual(got, tc.rewrite) {
				t.Errorf("response_rewrite = %s, want %s", show(got), show(tc.rewrite))
			}
			if got := applied.Settings.Policies.Buffering; !reflect.DeepEqual(got, tc.buffering) {
				t.Errorf("buffering = %s, want %s", show(got), show(tc.buffering))
			}
			checkFindings(t, applied, tc.findings)
		})
	}
}

func show(v any) string { b, _ := json.Marshal(v); return string(b) }

func checkFindings(t *testing.T, applied *registry.Applied, want []string) {
	t.Helper()
	if len(applied.Findings) != len(want) {
		t.Fatalf("findings = %v, want %d", applied.Findings, len(want))
	}
	for i, f := range applied.Findings {
		if got := string(f.Reason) + ": " + f.Message; !strings.Contains(got, want[i]) {
			t.Errorf("finding %d = %q, want it to contain %q", i, got, want[i])
		}
	}
}
