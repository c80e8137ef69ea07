package wwwredirect_test

import (
	"strings"
	"testing"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

const key = registry.Prefix + "from-to-www-redirect"

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		value string
		on    bool
		// finding is a substring of the one expected finding, "" for none.
		finding string
	}{
		{name: "true", value: "true", on: true},
		{name: "strconv spelling", value: " T ", on: true},
		{name: "false", value: "false"},
		{name: "invalid", value: "yes", finding: `InvalidAnnotation: nginx.ingress.kubernetes.io/from-to-www-redirect: "yes" is not a boolean (true or false); the key is ignored`},
		{name: "empty", value: "", finding: `from-to-www-redirect: "" is not a boolean`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			applied := registry.Apply(registry.All(), core.Origin{Kind: "Ingress", Namespace: "app", Name: "web"}, map[string]string{key: tc.value}, nil)
			if applied.Settings.WWWRedirect != tc.on || applied.Refused {
				t.Errorf("WWWRedirect = %v, refused = %v; want %v, false", applied.Settings.WWWRedirect, applied.Refused, tc.on)
			}
			switch {
			case tc.finding == "" && len(applied.Findings) != 0:
				t.Errorf("findings = %v, want none", applied.Findings)
			case tc.finding != "" && (len(applied.Findings) != 1 || !strings.Contains(string(applied.Findings[0].Reason)+": "+applied.Findings[0].Message, tc.finding)):
				t.Errorf("findings = %v, want one containing %q", applied.Findings, tc.finding)
			}
		})
	}
}
