package daemon

import "testing"

// sniGroupConfig is the shape of the Gateway API test
// HTTPRouteHTTPSListenerDetectMisdirectedRequests: a catch-all and a name
// of one group, a name of another, a wildcard of a third and a name under
// it of a fourth; "plain" has no group.
const sniGroupConfig = baseConfig + `
tenants:
  t:
    applications:
      any:
        domains: ["*"]
        sni_group: catchall
        default_route: {action: {respond: {status: 404, body: "none"}}}
      first:
        domains: [example.org]
        sni_group: catchall
        default_route: {action: {respond: {status: 200, body: "first"}}}
      second:
        domains: [second.example.org]
        sni_group: named
        default_route: {action: {respond: {status: 200, body: "second"}}}
      wild:
        domains: ["**.wildcard.org"]
        sni_group: wild
        default_route: {action: {respond: {status: 200, body: "wild"}}}
      fourth:
        domains: [fourth.wildcard.org]
        sni_group: fourth
        default_route: {action: {respond: {status: 200, body: "fourth"}}}
      plain:
        domains: [plain.example.com]
        default_route: {action: {respond: {status: 200, body: "plain"}}}
`

// TestSNIGroupMisdirected: an HTTPS request whose Host belongs to another
// sni_group than its connection's server name is answered 421; the same
// group, an application without a group, and plain HTTP are served.
func TestSNIGroupMisdirected(t *testing.T) {
	td := startDaemon(t, sniGroupConfig, nil)
	cases := []struct {
		sni, host string
		status    int
	}{
		{"example.org", "example.org", 200},
		{"example.org", "second.example.org", 421},
		{"example.org", "unknown.example.org", 404},
		{"second.example.org", "example.org", 421},
		{"second.example.org", "unknown.example.org", 421},
		{"a.wildcard.org", "b.c.wildcard.org", 200},
		{"a.wildcard.org", "fourth.wildcard.org", 421},
		{"fourth.wildcard.org", "a.wildcard.org", 421},
		{"unknown.example.org", "example.org", 200},
		{"second.example.org", "plain.example.com", 200},
		{"plain.example.com", "second.example.org", 200},
	}
	for _, tc := range cases {
		t.Run(tc.sni+" "+tc.host, func(t *testing.T) {
			if got, _, _ := getBySNI(t, td.url("https")+"/", tc.sni, tc.host); got != tc.status {
				t.Errorf("SNI %s, Host %s: %d, want %d", tc.sni, tc.host, got, tc.status)
			}
		})
	}
	if status, _, _ := get(t, client(), td.url("http")+"/", "second.example.org"); status != 200 {
		t.Errorf("plain HTTP to second.example.org: %d, want 200 (no server name, no group)", status)
	}
}
