package alias_test

import (
	"slices"
	"strings"
	"testing"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

const key = registry.Prefix + "server-alias"

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		aliases []string
		// findings are substrings of the expected findings, in order.
		findings []string
	}{
		{name: "one", value: "www.example.com", aliases: []string{"www.example.com"}},
		{name: "list trimmed, sorted, deduplicated", value: " b.example.com ,a.example.com,, b.example.com ", aliases: []string{"a.example.com", "b.example.com"}},
		{name: "lines of a YAML block", value: "a.example.com,\n  b.example.com\n", aliases: []string{"a.example.com", "b.example.com"}},
		{name: "lower-cased", value: "Shop.Example.COM,shop.example.com", aliases: []string{"shop.example.com"}},
		{name: "wildcard", value: "*.example.com", aliases: []string{"*.example.com"}},
		{name: "regex refused, the rest kept", value: `~^www\d+\.example\.com$,ok.example.com`, aliases: []string{"ok.example.com"},
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/server-alias: "~^www\\d+\\.example\\.com$" is a regex; regex server names are not served; this alias is ignored`}},
		{name: "trailing wildcard", value: "www.example.*", findings: []string{`"www.example.*" ends in a wildcard`}},
		{name: "dot form", value: ".example.com", findings: []string{`".example.com" is nginx's .name form; list the name and *.name instead`}},
		{name: "two-star wildcard", value: "**.example.com", findings: []string{`"**.example.com" is not a domain name: '*' may only be the whole left-most label`}},
		{name: "star inside", value: "a.*.example.com", findings: []string{`"a.*.example.com" is not a domain name: '*' may only be the whole left-most label`}},
		{name: "port", value: "example.com:8080", findings: []string{`"example.com:8080" is not a domain name`}},
		{name: "label too long", value: strings.Repeat("a", 64) + ".example.com", findings: []string{`is not a domain name: labels are 1..63 characters`}},
		{name: "character ingress-nginx refuses: the whole key", value: "ok.example.com,a b.example.com",
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/server-alias: "a b.example.com" is not a server name; the key is ignored`}},
		{name: "quote refused", value: `a"b`, findings: []string{`is not a server name; the key is ignored`}},
		{name: "empty", value: ""},
		{name: "only commas", value: " , ,"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			applied := registry.Apply(registry.All(), core.Origin{Kind: "Ingress", Namespace: "app", Name: "web"}, map[string]string{key: tc.value}, nil)
			if !slices.Equal(applied.Settings.Aliases, tc.aliases) {
				t.Errorf("Aliases = %q, want %q", applied.Settings.Aliases, tc.aliases)
			}
			if applied.Refused {
				t.Error("the object is refused; server-alias never refuses")
			}
			checkFindings(t, applied.Findings, tc.findings)
		})
	}
}

// TestFamilyDisabled checks that the key of the disabled family is reported
// and changes nothing.
func TestFamilyDisabled(t *testing.T) {
	sel, err := registry.Select("all,-alias")
	if err != nil {
		t.Fatal(err)
	}
	applied := registry.Apply(sel, core.Origin{Kind: "Ingress", Namespace: "app", Name: "web"}, map[string]string{key: "www.example.com"}, nil)
	if applied.Settings.Aliases != nil || applied.Refused || len(applied.Findings) != 1 {
		t.Errorf("aliases = %q, refused = %v, findings = %v; want no change and one finding", applied.Settings.Aliases, applied.Refused, applied.Findings)
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
