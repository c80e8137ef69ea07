package unsupported_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

const p = registry.Prefix

func TestApply(t *testing.T) {
	refusal := func(keys ...string) string {
		verb := " asks"
		if len(keys) > 1 {
			verb = " ask"
		}
		return "UnsupportedAccessControl: " + p + strings.Join(keys, ", "+p) + verb +
			" for access control Ramjet does not provide; the object is not served, so that its backend is not exposed unprotected"
	}
	tests := []struct {
		name        string
		spec        string
		annotations map[string]string
		refused     bool
		findings    []string // substrings of the findings, in order
	}{
		{"enable-modsecurity", "all", map[string]string{p + "enable-modsecurity": "true"}, true, []string{refusal("enable-modsecurity")}},
		{"enable-modsecurity false asks for nothing", "all", map[string]string{p + "enable-modsecurity": "false"}, false, nil},
		{"enable-owasp-core-rules False asks for nothing", "all", map[string]string{p + "enable-owasp-core-rules": "False"}, false, nil},
		{"enable-modsecurity not a boolean refuses", "all", map[string]string{p + "enable-modsecurity": "maybe"}, true, []string{refusal("enable-modsecurity")}},
		{"an off switch beside a refused key", "all", map[string]string{p + "enable-modsecurity": "false", p + "modsecurity-snippet": "SecRuleEngine On"}, true, []string{refusal("modsecurity-snippet")}},
		{"enable-owasp-core-rules", "all", map[string]string{p + "enable-owasp-core-rules": "true"}, true, []string{refusal("enable-owasp-core-rules")}},
		{"modsecurity-snippet over several lines", "all",
			map[string]string{p + "modsecurity-snippet": "SecRuleEngine On\r\nSecRule REQUEST_URI \"@contains x\" \"id:1,deny\"\n"}, true,
			[]string{refusal("modsecurity-snippet")}},
		{"modsecurity-transaction-id", "all", map[string]string{p + "modsecurity-transaction-id": "$request_id"}, true, []string{refusal("modsecurity-transaction-id")}},
		{"several keys in one finding", "all",
			map[string]string{p + "enable-modsecurity": "true", p + "modsecurity-transaction-id": "$request_id"}, true,
			[]string{refusal("enable-modsecurity", "modsecurity-transaction-id")}},
		{"with a NUL the value is invalid: still not served", "all", map[string]string{p + "enable-modsecurity": "true\x00"}, true,
			[]string{"InvalidAnnotation: " + p + "enable-modsecurity: the value holds control characters; the object is not served"}},
		{"auth-snippet is a snippet, not a refusal", "all", map[string]string{p + "auth-snippet": "proxy_set_header X-A b;"}, false,
			[]string{"SnippetIgnored: " + p + "auth-snippet is not interpreted"}},
		{"disabled family: not served", "all,-unsupported-access", map[string]string{p + "enable-modsecurity": "true"}, true,
			[]string{"UnsupportedAccessControl: " + p + "enable-modsecurity belongs to the access-control family unsupported-access, which is disabled (--annotations); the object is not served"}},
	}
	origin := core.Origin{Kind: "Ingress", Namespace: "shop", Name: "web", Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := registry.Select(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			out := registry.Apply(sel, origin, tc.annotations, nil)
			if out.Refused != tc.refused {
				t.Errorf("refused %t, want %t", out.Refused, tc.refused)
			}
			if !reflect.DeepEqual(out.Settings, core.Settings{}) {
				t.Errorf("settings changed: %+v", out.Settings)
			}
			if len(out.Findings) != len(tc.findings) {
				t.Errorf("%d findings, want %d: %v", len(out.Findings), len(tc.findings), out.Findings)
			}
			for i, f := range out.Findings {
				if line := string(f.Reason) + ": " + f.Message; i < len(tc.findings) && !strings.Contains(line, tc.findings[i]) {
					t.Errorf("finding %d:\n%s\nwant it to contain\n%s", i, line, tc.findings[i])
				}
			}
		})
	}
}
