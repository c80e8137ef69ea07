package snippets_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

const (
	p = registry.Prefix
	// content is a typical snippet; its marker must never reach a finding.
	content = "more_set_headers \"X-Marker: SecretMarker\";\r\n\tlocation /internal {\n\t\treturn 403;\n\t}\n"
	ignored = " is not interpreted: Ramjet builds its configuration from typed fields and never pastes annotation text into it; the snippet is ignored"
	served  = " and does not keep the object from being served"
)

func TestApply(t *testing.T) {
	tests := []struct {
		name        string
		spec        string
		annotations map[string]string
		refused     bool
		findings    []string // substrings of the findings, in order
	}{
		{"configuration-snippet over several lines", "all", map[string]string{p + "configuration-snippet": content}, false,
			[]string{"SnippetIgnored: " + p + "configuration-snippet" + ignored + served}},
		{"server-snippet", "all", map[string]string{p + "server-snippet": content}, false,
			[]string{"SnippetIgnored: " + p + "server-snippet" + ignored + served}},
		{"stream-snippet", "all", map[string]string{p + "stream-snippet": "server { listen 9000; proxy_pass SecretMarker:9000; }"}, false,
			[]string{"SnippetIgnored: " + p + "stream-snippet" + ignored + served}},
		{"auth-snippet", "all", map[string]string{p + "auth-snippet": content}, false,
			[]string{"SnippetIgnored: " + p + "auth-snippet" + ignored + " (it would only apply to auth-url, which Ramjet does not provide)" + served}},
		{"empty snippet", "all", map[string]string{p + "configuration-snippet": ""}, false,
			[]string{"SnippetIgnored: " + p + "configuration-snippet" + ignored}},
		{"one finding per snippet, in key order", "all",
			map[string]string{p + "server-snippet": content, p + "configuration-snippet": content, p + "stream-snippet": content}, false,
			[]string{p + "configuration-snippet" + ignored, p + "server-snippet" + ignored, p + "stream-snippet" + ignored}},
		{"a snippet with a NUL is invalid, and still not served content", "all", map[string]string{p + "server-snippet": "SecretMarker\x00"}, false,
			[]string{"InvalidAnnotation: " + p + "server-snippet: the value holds control characters; the key is ignored"}},
		{"a snippet over 4096 bytes is invalid", "all", map[string]string{p + "server-snippet": strings.Repeat("SecretMarker\n", 400)}, false,
			[]string{"InvalidAnnotation: " + p + "server-snippet: the value is longer than 4096 bytes; the key is ignored"}},
		{"auth-snippet beside auth-url: the object is refused for auth-url", "all",
			map[string]string{p + "auth-snippet": content, p + "auth-url": "http://auth/"}, true,
			[]string{"SnippetIgnored: " + p + "auth-snippet" + ignored, "UnsupportedAccessControl: " + p + "auth-url asks for access control"}},
		{"modsecurity-snippet is refused with ModSecurity", "all", map[string]string{p + "modsecurity-snippet": content}, true,
			[]string{"UnsupportedAccessControl: " + p + "modsecurity-snippet asks for access control"}},
		{"disabled family", "all,-snippets", map[string]string{p + "server-snippet": content}, false,
			[]string{"UnknownAnnotation: " + p + "server-snippet belongs to the family snippets, which is disabled (--annotations); it is ignored"}},
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
				t.Errorf("a snippet changed the settings: %+v", out.Settings)
			}
			if len(out.Findings) != len(tc.findings) {
				t.Errorf("%d findings, want %d: %v", len(out.Findings), len(tc.findings), out.Findings)
			}
			for i, f := range out.Findings {
				line := string(f.Reason) + ": " + f.Message
				if i < len(tc.findings) && !strings.Contains(line, tc.findings[i]) {
					t.Errorf("finding %d:\n%s\nwant it to contain\n%s", i, line, tc.findings[i])
				}
				if strings.Contains(line, "SecretMarker") || strings.Contains(line, "more_set_headers") {
					t.Errorf("finding %d quotes the snippet: %s", i, line)
				}
			}
		})
	}
}
