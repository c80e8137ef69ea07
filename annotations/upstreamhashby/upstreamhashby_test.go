package upstreamhashby_test

import (
	"encoding/json"
	"strings"
	"testing"

	_ "github.com/ramjet-dev/ramjet/annotations/affinity"
	_ "github.com/ramjet-dev/ramjet/annotations/loadbalance"
	_ "github.com/ramjet-dev/ramjet/annotations/upstreamhashby"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

func hash(h config.Hash) *core.PoolSettings {
	return &core.PoolSettings{Balance: config.BalanceHash, Hash: &h}
}

var (
	clientIP   = hash(config.Hash{By: config.HashByClientIP})
	requestURI = hash(config.Hash{By: config.HashByRequestURI})
	userID     = hash(config.Hash{By: config.HashByHeader, Header: "X-User-Id"})
)

const supported = "use $remote_addr (the client address), $http_<name> (a request header, the name in lower case with _ for -, such as $http_x_user_id), $cookie_<name> (a cookie) or $request_uri (path and query), alone, also written ${name}; the key is ignored"

func TestUpstreamHashBy(t *testing.T) {
	cases := []struct {
		name        string
		annotations map[string]string
		want        *core.PoolSettings // nil: the defaults
		// findings are "Reason: text" substrings of the findings, in order.
		findings []string
	}{
		{name: "client address", annotations: map[string]string{"upstream-hash-by": "$remote_addr"}, want: clientIP},
		{name: "client address in braces", annotations: map[string]string{"upstream-hash-by": "${remote_addr}"}, want: clientIP},
		{name: "binary client address", annotations: map[string]string{"upstream-hash-by": "$binary_remote_addr"}, want: clientIP},
		{name: "variable names are case-insensitive", annotations: map[string]string{"upstream-hash-by": "$Remote_Addr"}, want: clientIP},
		{name: "white space around", annotations: map[string]string{"upstream-hash-by": "  $remote_addr\t"}, want: clientIP},
		{name: "header", annotations: map[string]string{"upstream-hash-by": "$http_x_user_id"}, want: userID},
		{name: "header in braces", annotations: map[string]string{"upstream-hash-by": "${http_x_user_id}"}, want: userID},
		{name: "header in upper case", annotations: map[string]string{"upstream-hash-by": "$HTTP_X_USER_ID"}, want: userID},
		{name: "cookie", annotations: map[string]string{"upstream-hash-by": "$cookie_session_id"},
			want: hash(config.Hash{By: config.HashByCookieValue, CookieName: "session_id"})},
		{name: "cookie name keeps its case", annotations: map[string]string{"upstream-hash-by": "${cookie_JSESSIONID}"},
			want: hash(config.Hash{By: config.HashByCookieValue, CookieName: "JSESSIONID"})},
		{name: "request URI", annotations: map[string]string{"upstream-hash-by": "$request_uri"}, want: requestURI},
		{name: "request URI in braces", annotations: map[string]string{"upstream-hash-by": "${request_uri}"}, want: requestURI},

		{name: "combination", annotations: map[string]string{"upstream-hash-by": "${request_uri}-text"},
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/upstream-hash-by: "${request_uri}-text" is not an expression Ramjet can hash: ` + supported}},
		{name: "two variables", annotations: map[string]string{"upstream-hash-by": "$remote_addr$request_uri"},
			findings: []string{`upstream-hash-by: "$remote_addr$request_uri" is not an expression Ramjet can hash`}},
		{name: "other variable", annotations: map[string]string{"upstream-hash-by": "$arg_user"},
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/upstream-hash-by: "$arg_user" is not an expression Ramjet can hash: ` + supported}},
		{name: "the Host header", annotations: map[string]string{"upstream-hash-by": "$http_host"},
			findings: []string{`upstream-hash-by: "$http_host": ramjetd does not hash the Host header (it selects the route); use $remote_addr`}},
		{name: "dash in a variable name", annotations: map[string]string{"upstream-hash-by": "$http_x-user-id"},
			findings: []string{`"$http_x-user-id" is not an expression Ramjet can hash`}},
		{name: "header prefix without a name", annotations: map[string]string{"upstream-hash-by": "$http_"},
			findings: []string{`"$http_" is not an expression Ramjet can hash`}},
		{name: "cookie prefix without a name", annotations: map[string]string{"upstream-hash-by": "${cookie_}"},
			findings: []string{`"${cookie_}" is not an expression Ramjet can hash`}},
		{name: "no dollar", annotations: map[string]string{"upstream-hash-by": "remote_addr"},
			findings: []string{`"remote_addr" is not an expression Ramjet can hash`}},
		{name: "empty braces", annotations: map[string]string{"upstream-hash-by": "${}"},
			findings: []string{`"${}" is not an expression Ramjet can hash`}},
		{name: "empty", annotations: map[string]string{"upstream-hash-by": ""},
			findings: []string{`upstream-hash-by: "" is not an expression Ramjet can hash`}},

		{name: "subsets of 5", annotations: map[string]string{"upstream-hash-by": "$remote_addr", "upstream-hash-by-subset": "true", "upstream-hash-by-subset-size": " 5 "},
			want: hash(config.Hash{By: config.HashByClientIP, SubsetSize: 5})},
		{name: "subsets of the default size", annotations: map[string]string{"upstream-hash-by": "$request_uri", "upstream-hash-by-subset": "1"},
			want: hash(config.Hash{By: config.HashByRequestURI, SubsetSize: 3})},
		{name: "subset false", annotations: map[string]string{"upstream-hash-by": "$request_uri", "upstream-hash-by-subset": "false"}, want: requestURI},
		{name: "subset size without subset", annotations: map[string]string{"upstream-hash-by": "$remote_addr", "upstream-hash-by-subset-size": "5"},
			want: clientIP, findings: []string{
				`InvalidAnnotation: nginx.ingress.kubernetes.io/upstream-hash-by-subset-size: only applies with nginx.ingress.kubernetes.io/upstream-hash-by-subset: "true"; the key is ignored`,
			}},
		{name: "subset without upstream-hash-by", annotations: map[string]string{"upstream-hash-by-subset": "true"},
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/upstream-hash-by-subset: only applies with nginx.ingress.kubernetes.io/upstream-hash-by; the key is ignored`}},
		{name: "subset not a boolean", annotations: map[string]string{"upstream-hash-by": "$remote_addr", "upstream-hash-by-subset": "yes"},
			want: clientIP, findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/upstream-hash-by-subset: "yes" is not a boolean`}},
		{name: "subset size zero", annotations: map[string]string{"upstream-hash-by": "$remote_addr", "upstream-hash-by-subset": "true", "upstream-hash-by-subset-size": "0"},
			want: hash(config.Hash{By: config.HashByClientIP, SubsetSize: 3}), findings: []string{`upstream-hash-by-subset-size: 0 is out of range (1 to 1000)`}},
		{name: "subset size not a number", annotations: map[string]string{"upstream-hash-by": "$remote_addr", "upstream-hash-by-subset": "true", "upstream-hash-by-subset-size": "three"},
			want: hash(config.Hash{By: config.HashByClientIP, SubsetSize: 3}), findings: []string{`upstream-hash-by-subset-size: "three" is not an integer`}},
		{name: "subset size too large", annotations: map[string]string{"upstream-hash-by": "$remote_addr", "upstream-hash-by-subset": "true", "upstream-hash-by-subset-size": "1001"},
			want: hash(config.Hash{By: config.HashByClientIP, SubsetSize: 3}), findings: []string{`1001 is out of range (1 to 1000)`}},
		{name: "affinity takes precedence", annotations: map[string]string{"upstream-hash-by": "$remote_addr", "affinity": "cookie"},
			want: hash(config.Hash{By: config.HashByCookie, Cookie: &config.AffinityCookie{Name: "INGRESSCOOKIE", Path: "/"}}),
			findings: []string{
				`InvalidAnnotation: nginx.ingress.kubernetes.io/upstream-hash-by: nginx.ingress.kubernetes.io/affinity: cookie is set and takes precedence, as in ingress-nginx; the key is ignored`,
			}},
		{name: "upstream-hash-by beats load-balance", annotations: map[string]string{"upstream-hash-by": "$request_uri", "load-balance": "ewma"},
			want: requestURI, findings: []string{
				`InvalidAnnotation: nginx.ingress.kubernetes.io/load-balance: nginx.ingress.kubernetes.io/upstream-hash-by is set and takes precedence, as in ingress-nginx; the key is ignored`,
			}},
		{name: "an invalid upstream-hash-by leaves load-balance", annotations: map[string]string{"upstream-hash-by": "$host", "load-balance": "ewma"},
			want: &core.PoolSettings{Balance: config.BalanceLeastConn}, findings: []string{
				`InvalidAnnotation: nginx.ingress.kubernetes.io/upstream-hash-by: "$host" is not an expression Ramjet can hash`,
				`InvalidAnnotation: nginx.ingress.kubernetes.io/load-balance: ewma is served as least_conn`,
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			annotations := map[string]string{}
			for k, v := range tc.annotations {
				annotations[registry.Prefix+k] = v
			}
			out := registry.Apply(registry.All(), core.Origin{Kind: "Ingress", Namespace: "app", Name: "web"}, annotations, nil)
			want := core.PoolSettings{}
			if tc.want != nil {
				want = *tc.want
			}
			got, _ := json.Marshal(out.Settings.Pool)
			if wantText, _ := json.Marshal(want); string(got) != string(wantText) {
				t.Errorf("pool settings\n got %s\nwant %s", got, wantText)
			}
			var findings []string
			for _, f := range out.Findings {
				findings = append(findings, string(f.Reason)+": "+f.Message)
			}
			if len(findings) != len(tc.findings) {
				t.Fatalf("%d findings, want %d:\n%s", len(findings), len(tc.findings), strings.Join(findings, "\n"))
			}
			for i, f := range findings {
				if !strings.Contains(f, tc.findings[i]) {
					t.Errorf("finding %d\n got %s\nwant it to hold %s", i, f, tc.findings[i])
				}
			}
		})
	}
}
