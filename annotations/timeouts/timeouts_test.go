package timeouts_test

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
		{"send timeout is ignored", map[string]string{p + "proxy-send-timeout": "60", read: "30"}, timeouts(0, 30*time.Second),
			[]string{"UnknownAnnotation: nginx.ingress.kubernetes.io/proxy-send-timeout has no counterpart in Ramjet: ramjetd has no send timeout"}},
		{"ignored keys, even with bad values", map[string]string{p + "proxy-buffering": "on", p + "proxy-next-upstream-tries": "x"}, nil,
			[]string{"UnknownAnnotation: nginx.ingress.kubernetes.io/proxy-buffering has no counterpart in Ramjet: ramjetd streams responses",
				"UnknownAnnotation: nginx.ingress.kubernetes.io/proxy-next-upstream-tries has no counterpart in Ramjet: ramjetd tries a request at most three times"}},
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
		"proxy-send-timeout", "proxy-next-upstream", "proxy-next-upstream-tries", "proxy-next-upstream-timeout",
		"proxy-buffering", "proxy-request-buffering", "proxy-buffer-size", "proxy-buffers-number",
		"proxy-busy-buffers-size", "proxy-max-temp-file-size", "proxy-http-version", "proxy-cookie-domain",
		"proxy-cookie-path", "proxy-redirect-from", "proxy-redirect-to",
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
