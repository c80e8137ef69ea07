package sslpassthrough_test

import (
	"strings"
	"testing"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

func TestSSLPassthrough(t *testing.T) {
	const key = registry.Prefix + "ssl-passthrough"
	origin := core.Origin{Kind: "Ingress", Namespace: "sec", Name: "vault"}
	tests := []struct {
		name    string
		value   string // "-" for no annotation
		want    bool
		problem string // part of an InvalidAnnotation message; "" for none
	}{
		{name: "absent", value: "-"},
		{name: "true", value: "true", want: true},
		{name: "false", value: "false"},
		{name: "not a boolean", value: "yes", problem: "yes"},
		{name: "control characters", value: "true\n", problem: "control characters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			annotations := map[string]string{}
			if tc.value != "-" {
				annotations[key] = tc.value
			}
			got := registry.Apply(registry.All(), origin, annotations, nil)
			if got.Settings.SSLPassthrough != tc.want {
				t.Errorf("SSLPassthrough = %v, want %v", got.Settings.SSLPassthrough, tc.want)
			}
			if got.Refused {
				t.Error("the object is refused; ssl-passthrough never refuses")
			}
			var invalid []string
			for _, f := range got.Findings {
				if f.Reason == core.InvalidAnnotation {
					invalid = append(invalid, f.Message)
				}
			}
			switch {
			case tc.problem == "" && len(invalid) > 0:
				t.Errorf("findings %q, want none", invalid)
			case tc.problem != "" && (len(invalid) != 1 || !strings.Contains(invalid[0], key) || !strings.Contains(invalid[0], tc.problem)):
				t.Errorf("findings %q, want one naming %s and %q", invalid, key, tc.problem)
			}
		})
	}
}
