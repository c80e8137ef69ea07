package sslredirect_test

import (
	"strings"
	"testing"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

const prefix = registry.Prefix

// off and on are the values of Settings.SSLRedirect.
var off, on = false, true

func TestApply(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		ssl         *bool // Settings.SSLRedirect
		force       bool  // Settings.ForceSSLRedirect
		preserve    bool  // Settings.PreserveTrailingSlash
		port        bool  // Settings.PortInRedirects
		// findings are substrings of the expected findings, in order.
		findings []string
	}{
		{name: "absent: the host's TLS decides", annotations: map[string]string{}},
		{name: "ssl-redirect false", annotations: map[string]string{prefix + "ssl-redirect": "false"}, ssl: &off},
		{name: "ssl-redirect true", annotations: map[string]string{prefix + "ssl-redirect": "true"}, ssl: &on},
		{name: "strconv spellings", annotations: map[string]string{prefix + "ssl-redirect": "0", prefix + "force-ssl-redirect": "T"}, ssl: &off, force: true,
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/ssl-redirect: "0" has no effect: force-ssl-redirect is true and wins, as in ingress-nginx; the key is ignored`}},
		{name: "upper case and whitespace", annotations: map[string]string{prefix + "ssl-redirect": " FALSE "}, ssl: &off},
		{name: "force", annotations: map[string]string{prefix + "force-ssl-redirect": "true"}, force: true},
		{name: "force false", annotations: map[string]string{prefix + "force-ssl-redirect": "false"}},
		{name: "force wins over ssl-redirect false", annotations: map[string]string{prefix + "force-ssl-redirect": "true", prefix + "ssl-redirect": "false"}, ssl: &off, force: true,
			findings: []string{`ssl-redirect: "false" has no effect: force-ssl-redirect is true and wins`}},
		{name: "force with ssl-redirect true", annotations: map[string]string{prefix + "force-ssl-redirect": "true", prefix + "ssl-redirect": "true"}, ssl: &on, force: true},
		{name: "invalid ssl-redirect keeps the default", annotations: map[string]string{prefix + "ssl-redirect": "no"},
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/ssl-redirect: "no" is not a boolean (true or false); the key is ignored`}},
		{name: "empty ssl-redirect", annotations: map[string]string{prefix + "ssl-redirect": ""},
			findings: []string{`ssl-redirect: "" is not a boolean`}},
		{name: "invalid force keeps the default", annotations: map[string]string{prefix + "force-ssl-redirect": "yes", prefix + "ssl-redirect": "false"}, ssl: &off,
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/force-ssl-redirect: "yes" is not a boolean (true or false); the key is ignored`}},
		{name: "preserve-trailing-slash true", annotations: map[string]string{prefix + "preserve-trailing-slash": "true"}, preserve: true},
		{name: "preserve-trailing-slash false is the default", annotations: map[string]string{prefix + "preserve-trailing-slash": "false"}},
		{name: "preserve-trailing-slash invalid", annotations: map[string]string{prefix + "preserve-trailing-slash": "always"},
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/preserve-trailing-slash: "always" is not a boolean`}},
		{name: "use-port-in-redirects false is the default", annotations: map[string]string{prefix + "use-port-in-redirects": "false"}},
		{name: "use-port-in-redirects true", annotations: map[string]string{prefix + "use-port-in-redirects": "True", prefix + "force-ssl-redirect": "true"}, force: true, port: true},
		{name: "use-port-in-redirects invalid", annotations: map[string]string{prefix + "use-port-in-redirects": "443"},
			findings: []string{`use-port-in-redirects: "443" is not a boolean`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			applied := registry.Apply(registry.All(), core.Origin{Kind: "Ingress", Namespace: "app", Name: "web"}, tc.annotations, nil)
			s := applied.Settings
			if !sameBool(s.SSLRedirect, tc.ssl) {
				t.Errorf("SSLRedirect = %s, want %s", show(s.SSLRedirect), show(tc.ssl))
			}
			if s.ForceSSLRedirect != tc.force {
				t.Errorf("ForceSSLRedirect = %v, want %v", s.ForceSSLRedirect, tc.force)
			}
			if s.PreserveTrailingSlash != tc.preserve || s.PortInRedirects != tc.port {
				t.Errorf("PreserveTrailingSlash, PortInRedirects = %v, %v, want %v, %v", s.PreserveTrailingSlash, s.PortInRedirects, tc.preserve, tc.port)
			}
			if applied.Refused {
				t.Error("the object is refused; ssl-redirect never refuses")
			}
			checkFindings(t, applied.Findings, tc.findings)
		})
	}
}

// TestFamilyDisabled checks that the keys of the disabled family are
// reported and change nothing.
func TestFamilyDisabled(t *testing.T) {
	sel, err := registry.Select("all,-ssl-redirect")
	if err != nil {
		t.Fatal(err)
	}
	applied := registry.Apply(sel, core.Origin{Kind: "Ingress", Namespace: "app", Name: "web"}, map[string]string{prefix + "ssl-redirect": "false"}, nil)
	if applied.Settings.SSLRedirect != nil || applied.Refused {
		t.Errorf("settings = %+v, refused = %v; want no change", applied.Settings, applied.Refused)
	}
	checkFindings(t, applied.Findings, []string{"UnknownAnnotation: nginx.ingress.kubernetes.io/ssl-redirect belongs to the family ssl-redirect, which is disabled"})
}

func sameBool(a, b *bool) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

func show(b *bool) string {
	if b == nil {
		return "nil"
	}
	if *b {
		return "true"
	}
	return "false"
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
