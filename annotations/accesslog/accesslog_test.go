package accesslog_test

import (
	"strings"
	"testing"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

func TestApply(t *testing.T) {
	const key = registry.Prefix + "enable-access-log"
	tests := []struct {
		name    string
		value   string // "" for absent
		off     bool
		finding string // substring of the one finding, "" for none
	}{
		{name: "absent"},
		{name: "true", value: "true"},
		{name: "false", value: "false", off: true},
		{name: "strconv spelling", value: " F ", off: true},
		{name: "invalid keeps the log", value: "off", finding: `InvalidAnnotation: nginx.ingress.kubernetes.io/enable-access-log: "off" is not a boolean (true or false); the key is ignored`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			annotations := map[string]string{}
			if tc.value != "" {
				annotations[key] = tc.value
			}
			applied := registry.Apply(registry.All(), core.Origin{Kind: "Ingress", Namespace: "app", Name: "web"}, annotations, nil)
			if applied.Settings.NoAccessLog != tc.off {
				t.Errorf("NoAccessLog = %v, want %v", applied.Settings.NoAccessLog, tc.off)
			}
			var got []string
			for _, f := range applied.Findings {
				got = append(got, string(f.Reason)+": "+f.Message)
			}
			switch {
			case tc.finding == "" && len(got) != 0:
				t.Errorf("findings %q, want none", got)
			case tc.finding != "" && (len(got) != 1 || !strings.Contains(got[0], tc.finding)):
				t.Errorf("findings %q, want one containing %q", got, tc.finding)
			}
		})
	}
}
