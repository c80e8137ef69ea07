package ratelimit_test

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

const p = registry.Prefix

func TestApply(t *testing.T) {
	const zone = "shop/web/u-1"
	tests := []struct {
		name        string
		spec        string
		annotations map[string]string
		refused     bool
		want        *config.RateLimit // not checked when refused
		findings    []string          // substrings of the findings, in order
	}{
		{"rps with the default burst", "all", map[string]string{p + "limit-rps": "10"}, false,
			&config.RateLimit{Zone: zone, RPS: 10, RPSBurst: 50}, nil},
		{"rpm and rps with a multiplier", "all", map[string]string{p + "limit-rps": "2", p + "limit-rpm": "60", p + "limit-burst-multiplier": "3"}, false,
			&config.RateLimit{Zone: zone, RPS: 2, RPSBurst: 6, RPM: 60, RPMBurst: 180}, nil},
		{"multiplier 0: no burst", "all", map[string]string{p + "limit-rps": "2", p + "limit-burst-multiplier": "0"}, false,
			&config.RateLimit{Zone: zone, RPS: 2}, nil},
		{"negative multiplier refuses the object", "all", map[string]string{p + "limit-rps": "2", p + "limit-burst-multiplier": "-1"}, true,
			nil, []string{`limit-burst-multiplier: must be 0 or more; the object is not served`}},
		{"multiplier not an integer refuses the object", "all", map[string]string{p + "limit-rps": "2", p + "limit-burst-multiplier": "lots"}, true,
			nil, []string{`limit-burst-multiplier: "lots" is not an integer; the object is not served`}},
		{"connections", "all", map[string]string{p + "limit-connections": "4"}, false,
			&config.RateLimit{Zone: zone, Connections: 4}, nil},
		{"allowlist", "all", map[string]string{p + "limit-rps": "1", p + "limit-allowlist": " 10.0.0.0/8 ,\n192.0.2.1"}, false,
			&config.RateLimit{Zone: zone, RPS: 1, RPSBurst: 5, Allowlist: []string{"10.0.0.0/8", "192.0.2.1"}}, nil},
		{"whitelist when allowlist is empty", "all", map[string]string{p + "limit-rps": "1", p + "limit-allowlist": "", p + "limit-whitelist": "10.0.0.0/8"}, false,
			&config.RateLimit{Zone: zone, RPS: 1, RPSBurst: 5, Allowlist: []string{"10.0.0.0/8"}}, nil},
		{"allowlist beats whitelist", "all", map[string]string{p + "limit-rps": "1", p + "limit-allowlist": "10.0.0.0/8", p + "limit-whitelist": "192.0.2.0/24"}, false,
			&config.RateLimit{Zone: zone, RPS: 1, RPSBurst: 5, Allowlist: []string{"10.0.0.0/8"}}, nil},
		{"bandwidth in KiB", "all", map[string]string{p + "limit-rate": "100", p + "limit-rate-after": "1024"}, false,
			&config.RateLimit{Rate: 100 << 10, RateAfter: 1 << 20}, nil},
		{"rate-after alone does nothing", "all", map[string]string{p + "limit-rate-after": "1024"}, false, nil, nil},
		{"zero and negative set no limit", "all", map[string]string{p + "limit-rps": "0", p + "limit-rpm": "-3", p + "limit-rate": "0"}, false, nil, nil},
		{"not an integer refuses the object", "all", map[string]string{p + "limit-rpm": "1.5"}, true, nil,
			[]string{`InvalidAnnotation: nginx.ingress.kubernetes.io/limit-rpm: "1.5" is not an integer; the object is not served`}},
		{"connections not an integer", "all", map[string]string{p + "limit-connections": "many"}, true, nil,
			[]string{`limit-connections: "many" is not an integer; the object is not served`}},
		{"bad allowlist entry refuses the object", "all", map[string]string{p + "limit-rps": "1", p + "limit-whitelist": "10.0.0.0/33"}, true, nil,
			[]string{`limit-whitelist: entry 1: "10.0.0.0/33" is not a CIDR; the object is not served`}},
		{"control characters refuse the object", "all", map[string]string{p + "limit-rps": "1\x00"}, true, nil,
			[]string{`limit-rps: the value holds control characters; the object is not served`}},
		{"limit-rate not an integer refuses the object", "all", map[string]string{p + "limit-rps": "1", p + "limit-rate": "fast"}, true,
			nil, []string{`limit-rate: "fast" is not an integer; the object is not served`}},
		{"limit-rate-after with a unit refuses the object", "all", map[string]string{p + "limit-rate": "1", p + "limit-rate-after": "1m"}, true,
			nil, []string{`limit-rate-after: "1m" is not an integer; the object is not served`}},
		{"over the bound refuses the object", "all", map[string]string{p + "limit-connections": "2000000"}, true,
			nil, []string{`limit-connections: 2000000 is over 1000000; the object is not served`}},
		{"burst bounded", "all", map[string]string{p + "limit-rpm": "1000000", p + "limit-burst-multiplier": "1000"}, false,
			&config.RateLimit{Zone: zone, RPM: 1_000_000, RPMBurst: config.MaxRateLimitBurst}, nil},
		{"allowlist alone has no effect", "all", map[string]string{p + "limit-allowlist": "10.0.0.0/8"}, false, nil,
			[]string{`UnknownAnnotation: nginx.ingress.kubernetes.io/limit-allowlist is ignored: it has no effect without`}},
		{"disabled family: not served", "all,-rate-limit", map[string]string{p + "limit-rps": "5"}, true, nil,
			[]string{`UnsupportedAccessControl: nginx.ingress.kubernetes.io/limit-rps belongs to the access-control family rate-limit, which is disabled (--annotations); the object is not served`}},
	}
	origin := core.Origin{Kind: "Ingress", Namespace: "shop", Name: "web", UID: "u-1", Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
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
			if len(out.Findings) != len(tc.findings) {
				t.Errorf("%d findings, want %d: %v", len(out.Findings), len(tc.findings), out.Findings)
			}
			for i, f := range out.Findings {
				if line := string(f.Reason) + ": " + f.Message; i < len(tc.findings) && !strings.Contains(line, tc.findings[i]) {
					t.Errorf("finding %d:\n%s\nwant it to contain\n%s", i, line, tc.findings[i])
				}
			}
			if out.Refused {
				return
			}
			if got := out.Settings.Policies.RateLimit; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("rate_limit %+v, want %+v", got, tc.want)
			}
		})
	}
}
