package loadbalance_test

import (
	"strings"
	"testing"

	_ "github.com/ramjet-dev/ramjet/annotations/affinity"
	_ "github.com/ramjet-dev/ramjet/annotations/loadbalance"
	_ "github.com/ramjet-dev/ramjet/annotations/upstreamhashby"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

func TestLoadBalance(t *testing.T) {
	const ewma = "InvalidAnnotation: nginx.ingress.kubernetes.io/load-balance: ewma is served as least_conn (the member with the fewest requests in flight): ramjetd has no EWMA balancer"
	cases := []struct {
		name  string
		value string
		// others are more annotations of the object.
		others map[string]string
		// spec is --annotations; empty: all.
		spec        string
		wantBalance config.Balance
		wantHash    config.HashBy
		// findings are "Reason: text" substrings of the findings, in order.
		findings []string
	}{
		{name: "round robin is the default pool", value: "round_robin"},
		{name: "white space around", value: " round_robin "},
		{name: "ewma is served as least_conn", value: "ewma", wantBalance: config.BalanceLeastConn, findings: []string{ewma}},
		{name: "ewma with white space", value: "ewma\t", wantBalance: config.BalanceLeastConn, findings: []string{ewma}},

		{name: "values are case-sensitive", value: "EWMA", findings: []string{
			`InvalidAnnotation: nginx.ingress.kubernetes.io/load-balance: "EWMA" is not round_robin or ewma: the values are lower case, as in ingress-nginx; the key is ignored`}},
		{name: "Round_Robin", value: "Round_Robin", findings: []string{`"Round_Robin" is not round_robin or ewma: the values are lower case`}},
		{name: "least_conn is not an ingress-nginx value", value: "least_conn", findings: []string{
			`InvalidAnnotation: nginx.ingress.kubernetes.io/load-balance: "least_conn" is not round_robin or ewma; the key is ignored`}},
		{name: "empty", value: "", findings: []string{`load-balance: "" is not round_robin or ewma`}},
		{name: "chash", value: "chash", findings: []string{
			`load-balance: "chash" is ingress-nginx's balancer for nginx.ingress.kubernetes.io/upstream-hash-by; set that annotation instead (load-balance takes round_robin or ewma); the key is ignored`}},
		{name: "chashsubset", value: "chashsubset", findings: []string{`"chashsubset" is ingress-nginx's balancer for nginx.ingress.kubernetes.io/upstream-hash-by`}},
		{name: "sticky_balanced", value: "sticky_balanced", findings: []string{`"sticky_balanced" is ingress-nginx's balancer for nginx.ingress.kubernetes.io/affinity: cookie`}},
		{name: "sticky_persistent", value: "sticky_persistent", findings: []string{`"sticky_persistent" is ingress-nginx's balancer for nginx.ingress.kubernetes.io/affinity: cookie`}},

		{name: "upstream-hash-by takes precedence", value: "ewma", others: map[string]string{"upstream-hash-by": "$remote_addr"},
			wantBalance: config.BalanceHash, wantHash: config.HashByClientIP, findings: []string{
				`InvalidAnnotation: nginx.ingress.kubernetes.io/load-balance: nginx.ingress.kubernetes.io/upstream-hash-by is set and takes precedence, as in ingress-nginx; the key is ignored`}},
		{name: "even over round_robin", value: "round_robin", others: map[string]string{"upstream-hash-by": "$request_uri"},
			wantBalance: config.BalanceHash, wantHash: config.HashByRequestURI, findings: []string{`upstream-hash-by is set and takes precedence`}},
		{name: "affinity takes precedence", value: "ewma", others: map[string]string{"affinity": "cookie"},
			wantBalance: config.BalanceHash, wantHash: config.HashByCookie, findings: []string{
				`InvalidAnnotation: nginx.ingress.kubernetes.io/load-balance: nginx.ingress.kubernetes.io/affinity: cookie is set and takes precedence, as in ingress-nginx; the key is ignored`}},
		{name: "an invalid affinity does not", value: "ewma", others: map[string]string{"affinity": "true"},
			wantBalance: config.BalanceLeastConn, findings: []string{`affinity: "true" is not cookie`, ewma}},
		{name: "a disabled family does not", value: "ewma", others: map[string]string{"upstream-hash-by": "$remote_addr"}, spec: "all,-upstream-hash-by",
			wantBalance: config.BalanceLeastConn, findings: []string{
				`UnknownAnnotation: nginx.ingress.kubernetes.io/upstream-hash-by belongs to the family upstream-hash-by, which is disabled`, ewma}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			annotations := map[string]string{registry.Prefix + "load-balance": tc.value}
			for k, v := range tc.others {
				annotations[registry.Prefix+k] = v
			}
			spec := tc.spec
			if spec == "" {
				spec = "all"
			}
			sel, err := registry.Select(spec)
			if err != nil {
				t.Fatal(err)
			}
			out := registry.Apply(sel, core.Origin{Kind: "Ingress", Namespace: "app", Name: "web"}, annotations, nil)
			pool := out.Settings.Pool
			var by config.HashBy
			if pool.Hash != nil {
				by = pool.Hash.By
			}
			if pool.Balance != tc.wantBalance || by != tc.wantHash {
				t.Errorf("balance %q hash by %q, want %q and %q", pool.Balance, by, tc.wantBalance, tc.wantHash)
			}
			if len(out.Findings) != len(tc.findings) {
				t.Fatalf("%d findings, want %d: %v", len(out.Findings), len(tc.findings), out.Findings)
			}
			for i, f := range out.Findings {
				if got := string(f.Reason) + ": " + f.Message; !strings.Contains(got, tc.findings[i]) {
					t.Errorf("finding %d\n got %s\nwant it to hold %s", i, got, tc.findings[i])
				}
			}
		})
	}
}
