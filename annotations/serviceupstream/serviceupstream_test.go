package serviceupstream_test

import (
	"strings"
	"testing"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

var origin = core.Origin{Kind: "Ingress", Namespace: "shop", Name: "web"}

func TestServiceUpstream(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string // keys without the prefix
		want        core.PoolSettings
		// problem is part of the InvalidAnnotation message; "" for none.
		problem string
	}{
		{name: "absent is false", annotations: map[string]string{}},
		{name: "true", annotations: map[string]string{"service-upstream": "true"}, want: core.PoolSettings{ServiceUpstream: true}},
		{name: "True", annotations: map[string]string{"service-upstream": "True"}, want: core.PoolSettings{ServiceUpstream: true}},
		{name: "TRUE with spaces", annotations: map[string]string{"service-upstream": " TRUE "}, want: core.PoolSettings{ServiceUpstream: true}},
		{name: "1 as ingress-nginx reads it", annotations: map[string]string{"service-upstream": "1"}, want: core.PoolSettings{ServiceUpstream: true}},
		{name: "t", annotations: map[string]string{"service-upstream": "t"}, want: core.PoolSettings{ServiceUpstream: true}},
		{name: "false", annotations: map[string]string{"service-upstream": "false"}},
		{name: "0", annotations: map[string]string{"service-upstream": "0"}},
		{name: "with HTTPS", annotations: map[string]string{"service-upstream": "true", "backend-protocol": "HTTPS"},
			want: core.PoolSettings{ServiceUpstream: true, Scheme: config.SchemeHTTPS}},
		{name: "yes", annotations: map[string]string{"service-upstream": "yes"}, problem: `service-upstream: "yes" is not a boolean (true or false)`},
		{name: "on", annotations: map[string]string{"service-upstream": "on"}, problem: `"on" is not a boolean`},
		{name: "empty", annotations: map[string]string{"service-upstream": ""}, problem: `"" is not a boolean`},
		{name: "2", annotations: map[string]string{"service-upstream": "2"}, problem: `"2" is not a boolean`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			annotations := map[string]string{}
			for k, v := range tc.annotations {
				annotations[registry.Prefix+k] = v
			}
			got := registry.Apply(registry.All(), origin, annotations, nil)
			if p := got.Settings.Pool; p.ServiceUpstream != tc.want.ServiceUpstream || p.Scheme != tc.want.Scheme {
				t.Errorf("pool settings = %+v, want %+v", p, tc.want)
			}
			if tc.problem == "" {
				if len(got.Findings) != 0 {
					t.Errorf("findings = %v, want none", got.Findings)
				}
				return
			}
			if len(got.Findings) != 1 || got.Findings[0].Reason != core.InvalidAnnotation || !strings.Contains(got.Findings[0].Message, tc.problem) ||
				!strings.HasSuffix(got.Findings[0].Message, "; the key is ignored") {
				t.Errorf("findings = %v, want one InvalidAnnotation holding %q, the key ignored", got.Findings, tc.problem)
			}
		})
	}
}

// TestOwnPool checks that service-upstream paths get a pool of their own,
// never the endpoints' pool of the same Service port.
func TestOwnPool(t *testing.T) {
	plain := core.PoolName("shop", "web", "80", core.PoolSettings{})
	got := registry.Apply(registry.All(), origin, map[string]string{registry.Prefix + "service-upstream": "true"}, nil)
	if own := core.PoolName("shop", "web", "80", got.Settings.Pool); own == plain {
		t.Errorf("pool name %s is that of the endpoints' pool", own)
	}
}
