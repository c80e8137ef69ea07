package core

import (
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

func TestSameAccess(t *testing.T) {
	extAuth := func(url string) config.Policies { return config.Policies{ExternalAuth: &config.ExternalAuth{URL: url}} }
	auth := func(users, realm string) *BasicAuth { return &BasicAuth{Htpasswd: []byte(users), Realm: realm} }
	allow := func(ranges ...string) config.Policies { return config.Policies{Allow: ranges} }
	tests := []struct {
		name string
		a, b Settings
		want bool
	}{
		{"neither", Settings{}, Settings{}, true},
		{"same allow list", Settings{Policies: allow("10.0.0.0/8")}, Settings{Policies: allow("10.0.0.0/8")}, true},
		{"wider allow list", Settings{Policies: allow("0.0.0.0/0")}, Settings{Policies: allow("10.0.0.0/8")}, false},
		{"deny list only on one", Settings{Policies: config.Policies{Deny: []string{"10.1.0.0/16"}}}, Settings{}, false},
		{"same users and realm", Settings{BasicAuth: auth("a:$2y$x\n", "r")}, Settings{BasicAuth: auth("a:$2y$x\n", "r")}, true},
		{"other users", Settings{BasicAuth: auth("b:$2y$x\n", "r")}, Settings{BasicAuth: auth("a:$2y$x\n", "r")}, false},
		{"other realm", Settings{BasicAuth: auth("a:$2y$x\n", "s")}, Settings{BasicAuth: auth("a:$2y$x\n", "r")}, false},
		{"auth only on the main", Settings{}, Settings{BasicAuth: auth("a:$2y$x\n", "r")}, false},
		{"same external auth", Settings{Policies: extAuth("http://auth.a/")}, Settings{Policies: extAuth("http://auth.a/")}, true},
		{"other external auth", Settings{Policies: extAuth("http://auth.b/")}, Settings{Policies: extAuth("http://auth.a/")}, false},
		{"external auth only on the canary", Settings{Policies: extAuth("http://auth.a/")}, Settings{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameAccess(tc.a, tc.b); got != tc.want {
				t.Errorf("sameAccess = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestCanaryPool(t *testing.T) {
	affinity := &config.Hash{By: config.HashByCookie, Cookie: &config.AffinityCookie{Name: "INGRESSCOOKIE"}}
	ownAffinity := &config.Hash{By: config.HashByCookie, Cookie: &config.AffinityCookie{Name: "canary"}}
	withAffinity := PoolSettings{Scheme: config.SchemeHTTPS, ServerName: "api.internal", Balance: config.BalanceHash, Hash: affinity}
	plain := PoolSettings{Scheme: config.SchemeHTTPS, ServerName: "api.internal", Balance: config.BalanceLeastConn}
	tests := []struct {
		name   string
		main   PoolSettings
		own    PoolSettings
		legacy bool
		want   PoolSettings
	}{
		{"takes the main's scheme, TLS and affinity", withAffinity, PoolSettings{}, false, withAffinity},
		{"the main's affinity over its own balancing", withAffinity, PoolSettings{Balance: config.BalanceLeastConn, Scheme: config.SchemeH2C}, false, withAffinity},
		{"the main's affinity over its own", withAffinity, PoolSettings{Balance: config.BalanceHash, Hash: ownAffinity}, false, withAffinity},
		{"keeps its own service-upstream", withAffinity, PoolSettings{ServiceUpstream: true},
			false, PoolSettings{Scheme: config.SchemeHTTPS, ServerName: "api.internal", Balance: config.BalanceHash, Hash: affinity, ServiceUpstream: true}},
		{"legacy keeps its own balancing", withAffinity, PoolSettings{Balance: config.BalanceLeastConn}, true,
			PoolSettings{Scheme: config.SchemeHTTPS, ServerName: "api.internal", Balance: config.BalanceLeastConn}},
		{"legacy without balancing of its own", withAffinity, PoolSettings{}, true, PoolSettings{Scheme: config.SchemeHTTPS, ServerName: "api.internal"}},
		{"legacy keeps its own affinity", withAffinity, PoolSettings{Balance: config.BalanceHash, Hash: ownAffinity}, true,
			PoolSettings{Scheme: config.SchemeHTTPS, ServerName: "api.internal", Balance: config.BalanceHash, Hash: ownAffinity}},
		{"a main without affinity: its own", plain, PoolSettings{Balance: config.BalanceHash, Hash: ownAffinity}, false,
			PoolSettings{Scheme: config.SchemeHTTPS, ServerName: "api.internal", Balance: config.BalanceHash, Hash: ownAffinity}},
		{"a main without affinity: its balancing", plain, PoolSettings{}, false, plain},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			main := &Contribution{Settings: Settings{Pool: tc.main}}
			got := canaryPool(main, &Contribution{Settings: Settings{Pool: tc.own, LegacyCanaryAffinity: tc.legacy}})
			if got.digest() != tc.want.digest() {
				t.Errorf("canaryPool = %+v, want %+v", got, tc.want)
			}
		})
	}
}
