package canary

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

func TestParse(t *testing.T) {
	const p = registry.Prefix
	tests := []struct {
		name        string
		annotations map[string]string
		want        *core.Canary
		finding     string // substrings of the findings, split by "|"; "" for none
	}{
		{"not a canary", map[string]string{p + "canary": "false"}, nil, ""},
		{"weight", map[string]string{p + "canary": "true", p + "canary-weight": "20"},
			&core.Canary{Weight: 20, Total: 100}, ""},
		{"True spelling", map[string]string{p + "canary": "True", p + "canary-weight": "5"},
			&core.Canary{Weight: 5, Total: 100}, ""},
		{"total above 100", map[string]string{p + "canary": "true", p + "canary-weight": "5", p + "canary-weight-total": "1000"},
			&core.Canary{Weight: 5, Total: 1000}, ""},
		{"total below 100 counts as 100", map[string]string{p + "canary": "true", p + "canary-weight": "5", p + "canary-weight-total": "10"},
			&core.Canary{Weight: 5, Total: 100}, "canary-weight-total: 10 is below 100"},
		{"weight above the total counts as the total", map[string]string{p + "canary": "true", p + "canary-weight": "101"},
			&core.Canary{Weight: 100, Total: 100}, "canary-weight: 101 is above the total of 100 (canary-weight-total); it counts as the total, as in ingress-nginx's balancer: every request goes to the canary"},
		{"weight above a total above 100", map[string]string{p + "canary": "true", p + "canary-weight": "1001", p + "canary-weight-total": "1000"},
			&core.Canary{Weight: 1000, Total: 1000}, "canary-weight: 1001 is above the total of 1000"},
		{"weight equal to the total", map[string]string{p + "canary": "true", p + "canary-weight": "100"},
			&core.Canary{Weight: 100, Total: 100}, ""},
		{"negative weight", map[string]string{p + "canary": "true", p + "canary-weight": "-1"},
			&core.Canary{Total: 100}, "canary-weight: -1 is out of range"},
		{"weight not a number", map[string]string{p + "canary": "true", p + "canary-weight": "10%"},
			&core.Canary{Total: 100}, `canary-weight: "10%" is not an integer`},
		{"header", map[string]string{p + "canary": "true", p + "canary-by-header": "X-Canary"},
			&core.Canary{Header: "X-Canary", Total: 100}, ""},
		{"header with a space", map[string]string{p + "canary": "true", p + "canary-by-header": "X Canary"},
			&core.Canary{Total: 100}, `"X Canary" is not a header name`},
		{"header value", map[string]string{p + "canary": "true", p + "canary-by-header": "X-V", p + "canary-by-header-value": "v2"},
			&core.Canary{Header: "X-V", HeaderValue: "v2", Total: 100}, ""},
		{"value without header", map[string]string{p + "canary": "true", p + "canary-by-header-value": "v2"},
			&core.Canary{Total: 100}, "need nginx.ingress.kubernetes.io/canary-by-header"},
		{"value beats pattern", map[string]string{p + "canary": "true", p + "canary-by-header": "X-V", p + "canary-by-header-value": "v2", p + "canary-by-header-pattern": "v.*"},
			&core.Canary{Header: "X-V", HeaderValue: "v2", Total: 100}, "canary-by-header-pattern is ignored"},
		{"pattern", map[string]string{p + "canary": "true", p + "canary-by-header": "X-V", p + "canary-by-header-pattern": "^v[0-9]+$"},
			&core.Canary{Header: "X-V", HeaderPattern: "^v[0-9]+$", Total: 100}, ""},
		{"pattern RE2 refuses", map[string]string{p + "canary": "true", p + "canary-by-header": "X-V", p + "canary-by-header-pattern": "(?=v)"},
			&core.Canary{Header: "X-V", Total: 100}, "is not a regular expression ramjetd takes"},
		{"pattern that would close its group", map[string]string{p + "canary": "true", p + "canary-by-header": "X-V", p + "canary-by-header-pattern": "a)|(b"},
			&core.Canary{Header: "X-V", Total: 100}, "is not a regular expression ramjetd takes"},
		{"cookie", map[string]string{p + "canary": "true", p + "canary-by-cookie": "beta"},
			&core.Canary{Cookie: "beta", Total: 100}, ""},
		{"cookie name with =", map[string]string{p + "canary": "true", p + "canary-by-cookie": "a=b"},
			&core.Canary{Total: 100}, "is not a cookie name"},
		{"keys without canary", map[string]string{p + "canary-weight": "20", p + "canary-by-cookie": "beta"},
			nil, "canary-by-cookie, nginx.ingress.kubernetes.io/canary-weight: ignored"},
		{"canary not a boolean", map[string]string{p + "canary": "yes", p + "canary-weight": "20"},
			nil, `canary: "yes" is not a boolean|canary-weight: ignored`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			applied := registry.Apply(registry.All(), core.Origin{Kind: "Ingress", Namespace: "app", Name: "c"}, tc.annotations, nil)
			if !reflect.DeepEqual(applied.Settings.Canary, tc.want) {
				t.Errorf("canary = %+v, want %+v", applied.Settings.Canary, tc.want)
			}
			if applied.Refused {
				t.Error("a canary key refused the object")
			}
			checkFindings(t, applied.Findings, tc.finding)
		})
	}
}

func checkFindings(t *testing.T, findings []core.Finding, want string) {
	t.Helper()
	var wants []string
	if want != "" {
		wants = strings.Split(want, "|")
	}
	if len(findings) != len(wants) {
		t.Fatalf("findings = %v, want %d", findings, len(wants))
	}
	for i, w := range wants {
		if !strings.Contains(findings[i].Message, w) || findings[i].Reason != core.InvalidAnnotation {
			t.Errorf("finding %d = %v, want InvalidAnnotation with %q", i, findings[i], w)
		}
	}
}
