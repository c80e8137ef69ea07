package affinity_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	_ "github.com/ramjet-dev/ramjet/annotations/affinity"
	_ "github.com/ramjet-dev/ramjet/annotations/loadbalance"
	_ "github.com/ramjet-dev/ramjet/annotations/upstreamhashby"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

// cookie is the pool settings of cookie affinity with c.
func cookie(c config.AffinityCookie) core.PoolSettings {
	return core.PoolSettings{Balance: config.BalanceHash, Hash: &config.Hash{By: config.HashByCookie, Cookie: &c}}
}

var defaults = config.AffinityCookie{Name: "INGRESSCOOKIE", Path: "/"}

func TestAffinity(t *testing.T) {
	withDefaults := func(change func(*config.AffinityCookie)) core.PoolSettings {
		c := defaults
		change(&c)
		return cookie(c)
	}
	cases := []struct {
		name        string
		annotations map[string]string
		want        core.PoolSettings
		// findings are "Reason: text" substrings of the findings, in order.
		findings []string
	}{
		{name: "cookie with ingress-nginx's defaults", annotations: map[string]string{"affinity": "cookie"}, want: cookie(defaults)},
		{name: "every cookie setting", annotations: map[string]string{
			"affinity": "cookie", "session-cookie-name": "route", "session-cookie-path": "/app",
			"session-cookie-domain": "Example.COM", "session-cookie-max-age": "3600",
			"session-cookie-samesite": "lax", "session-cookie-secure": "true",
		}, want: cookie(config.AffinityCookie{Name: "route", Path: "/app", Domain: "example.com", MaxAge: config.Duration(time.Hour), SameSite: "Lax", Secure: true})},
		{name: "white space around values", annotations: map[string]string{
			"affinity": " cookie ", "session-cookie-name": " route ", "session-cookie-samesite": " STRICT ", "session-cookie-max-age": " 60 ",
		}, want: withDefaults(func(c *config.AffinityCookie) {
			c.Name, c.SameSite, c.MaxAge = "route", "Strict", config.Duration(time.Minute)
		})},
		{name: "leading dot of the domain", annotations: map[string]string{"affinity": "cookie", "session-cookie-domain": ".example.com"},
			want: withDefaults(func(c *config.AffinityCookie) { c.Domain = ".example.com" })},
		{name: "expires alone sets the lifetime", annotations: map[string]string{"affinity": "cookie", "session-cookie-expires": "172800"},
			want: withDefaults(func(c *config.AffinityCookie) { c.MaxAge = config.Duration(48 * time.Hour) })},
		{name: "max-age wins over expires", annotations: map[string]string{"affinity": "cookie", "session-cookie-expires": "60", "session-cookie-max-age": "120"},
			want: withDefaults(func(c *config.AffinityCookie) { c.MaxAge = config.Duration(2 * time.Minute) })},
		{name: "zero max-age is a session cookie", annotations: map[string]string{"affinity": "cookie", "session-cookie-max-age": "0"}, want: cookie(defaults)},
		{name: "the longest lifetime", annotations: map[string]string{"affinity": "cookie", "session-cookie-max-age": "2147483647"},
			want: withDefaults(func(c *config.AffinityCookie) { c.MaxAge = config.Duration(2147483647 * time.Second) })},
		{name: "secure false", annotations: map[string]string{"affinity": "cookie", "session-cookie-secure": "False"}, want: cookie(defaults)},
		{name: "samesite None", annotations: map[string]string{"affinity": "cookie", "session-cookie-samesite": "none"},
			want: withDefaults(func(c *config.AffinityCookie) { c.SameSite = "None" })},

		{name: "affinity is case-sensitive", annotations: map[string]string{"affinity": "Cookie"},
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/affinity: "Cookie" is not cookie, the only affinity type; the key is ignored`}},
		{name: "other affinity type", annotations: map[string]string{"affinity": "ip"},
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/affinity: "ip" is not cookie`}},
		{name: "cookie name that is not a token", annotations: map[string]string{"affinity": "cookie", "session-cookie-name": "a/b"}, want: cookie(defaults),
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/session-cookie-name: "a/b" is not a cookie name`}},
		{name: "empty cookie name", annotations: map[string]string{"affinity": "cookie", "session-cookie-name": ""}, want: cookie(defaults),
			findings: []string{`session-cookie-name: "" is not a cookie name`}},
		{name: "negative max-age", annotations: map[string]string{"affinity": "cookie", "session-cookie-max-age": "-1"}, want: cookie(defaults),
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/session-cookie-max-age: "-1" is negative: browsers would drop the cookie at once`}},
		{name: "negative expires falls back to no lifetime", annotations: map[string]string{"affinity": "cookie", "session-cookie-expires": "-5"}, want: cookie(defaults),
			findings: []string{`session-cookie-expires: "-5" is negative`}},
		{name: "invalid max-age leaves expires", annotations: map[string]string{"affinity": "cookie", "session-cookie-max-age": "1h", "session-cookie-expires": "30"},
			want:     withDefaults(func(c *config.AffinityCookie) { c.MaxAge = config.Duration(30 * time.Second) }),
			findings: []string{`session-cookie-max-age: "1h" is not a number of seconds`}},
		{name: "lifetime too long", annotations: map[string]string{"affinity": "cookie", "session-cookie-max-age": "2147483648"}, want: cookie(defaults),
			findings: []string{`session-cookie-max-age: "2147483648" seconds is too long (at most 2147483647)`}},
		{name: "lifetime beyond 64 bits", annotations: map[string]string{"affinity": "cookie", "session-cookie-max-age": "99999999999999999999"}, want: cookie(defaults),
			findings: []string{`seconds is too long`}},
		{name: "relative path", annotations: map[string]string{"affinity": "cookie", "session-cookie-path": "app"}, want: cookie(defaults),
			findings: []string{`session-cookie-path: "app" must start with /`}},
		{name: "path with a semicolon", annotations: map[string]string{"affinity": "cookie", "session-cookie-path": "/a;Domain=evil"}, want: cookie(defaults),
			findings: []string{`must hold only printable ASCII characters without spaces or ';'`}},
		{name: "path with a space", annotations: map[string]string{"affinity": "cookie", "session-cookie-path": "/a b"}, want: cookie(defaults),
			findings: []string{`session-cookie-path: "/a b" must hold only printable ASCII`}},
		{name: "path with a non-ASCII character", annotations: map[string]string{"affinity": "cookie", "session-cookie-path": "/é"}, want: cookie(defaults),
			findings: []string{`session-cookie-path: "/é" must hold only printable ASCII`}},
		{name: "wildcard domain", annotations: map[string]string{"affinity": "cookie", "session-cookie-domain": "*.example.com"}, want: cookie(defaults),
			findings: []string{`session-cookie-domain: "*.example.com" is not a domain`}},
		{name: "domain with a port", annotations: map[string]string{"affinity": "cookie", "session-cookie-domain": "example.com:80"}, want: cookie(defaults),
			findings: []string{`session-cookie-domain: "example.com:80" is not a domain`}},
		{name: "unknown samesite", annotations: map[string]string{"affinity": "cookie", "session-cookie-samesite": "Relaxed"}, want: cookie(defaults),
			findings: []string{`session-cookie-samesite: "Relaxed" is not one of None, Lax, Strict`}},
		{name: "secure not a boolean", annotations: map[string]string{"affinity": "cookie", "session-cookie-secure": "yes"}, want: cookie(defaults),
			findings: []string{`session-cookie-secure: "yes" is not a boolean`}},

		{name: "persistent mode and change on failure", annotations: map[string]string{
			"affinity": "cookie", "affinity-mode": " persistent ", "session-cookie-change-on-failure": "True",
		}, want: withDefaults(func(c *config.AffinityCookie) { c.Mode, c.ChangeOnFailure = config.AffinityPersistent, true })},
		{name: "balanced mode and no change on failure", annotations: map[string]string{
			"affinity": "cookie", "affinity-mode": "balanced", "session-cookie-change-on-failure": "false",
		}, want: cookie(defaults)},
		{name: "affinity-mode is case-sensitive", annotations: map[string]string{"affinity": "cookie", "affinity-mode": "Persistent"}, want: cookie(defaults),
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/affinity-mode: "Persistent" is not one of balanced, persistent; the key is ignored`}},
		{name: "change-on-failure not a boolean", annotations: map[string]string{"affinity": "cookie", "session-cookie-change-on-failure": "yes"}, want: cookie(defaults),
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/session-cookie-change-on-failure: "yes" is not a boolean`}},
		{name: "affinity-mode without affinity", annotations: map[string]string{"affinity-mode": "persistent"},
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/affinity-mode: only applies with nginx.ingress.kubernetes.io/affinity: cookie`}},
		{name: "canary behavior on a main object", annotations: map[string]string{"affinity": "cookie", "affinity-canary-behavior": "legacy"}, want: cookie(defaults),
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/affinity-canary-behavior: only applies to a canary (nginx.ingress.kubernetes.io/canary: "true"); the key is ignored`}},
		{name: "unknown canary behavior", annotations: map[string]string{"canary": "true", "affinity-canary-behavior": "Sticky"},
			findings: []string{`InvalidAnnotation: nginx.ingress.kubernetes.io/affinity-canary-behavior: "Sticky" is not one of sticky, legacy`}},
		{name: "ignored keys say what Ramjet does", annotations: map[string]string{
			"affinity": "cookie", "session-cookie-conditional-samesite-none": "true", "session-cookie-partitioned": "true",
		}, want: cookie(defaults), findings: []string{
			`UnknownAnnotation: nginx.ingress.kubernetes.io/session-cookie-conditional-samesite-none has no counterpart in Ramjet: SameSite=None is sent`,
			`UnknownAnnotation: nginx.ingress.kubernetes.io/session-cookie-partitioned has no counterpart in Ramjet: ramjetd does not set the Partitioned`,
		}},
		{name: "session-cookie keys without affinity do nothing", annotations: map[string]string{"session-cookie-name": "route", "session-cookie-max-age": "60"}, findings: []string{
			`InvalidAnnotation: nginx.ingress.kubernetes.io/session-cookie-max-age: only applies with nginx.ingress.kubernetes.io/affinity: cookie; the key is ignored`,
			`InvalidAnnotation: nginx.ingress.kubernetes.io/session-cookie-name: only applies with nginx.ingress.kubernetes.io/affinity: cookie; the key is ignored`,
		}},
		{name: "session-cookie keys with an invalid affinity", annotations: map[string]string{"affinity": "sticky", "session-cookie-name": "route"}, findings: []string{
			`affinity: "sticky" is not cookie`,
			`session-cookie-name: only applies with nginx.ingress.kubernetes.io/affinity: cookie`,
		}},
		{name: "affinity beats upstream-hash-by and load-balance", annotations: map[string]string{
			"affinity": "cookie", "upstream-hash-by": "$remote_addr", "load-balance": "ewma",
		}, want: cookie(defaults), findings: []string{
			`InvalidAnnotation: nginx.ingress.kubernetes.io/load-balance: nginx.ingress.kubernetes.io/affinity: cookie is set and takes precedence, as in ingress-nginx; the key is ignored`,
			`InvalidAnnotation: nginx.ingress.kubernetes.io/upstream-hash-by: nginx.ingress.kubernetes.io/affinity: cookie is set and takes precedence, as in ingress-nginx; the key is ignored`,
		}},
		{name: "an invalid affinity leaves upstream-hash-by", annotations: map[string]string{"affinity": "Cookie", "upstream-hash-by": "$remote_addr"},
			want:     core.PoolSettings{Balance: config.BalanceHash, Hash: &config.Hash{By: config.HashByClientIP}},
			findings: []string{`affinity: "Cookie" is not cookie`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			annotations := map[string]string{}
			for k, v := range tc.annotations {
				annotations[registry.Prefix+k] = v
			}
			out := registry.Apply(registry.All(), core.Origin{Kind: "Ingress", Namespace: "app", Name: "web"}, annotations, nil)
			if !reflect.DeepEqual(out.Settings.Pool, tc.want) {
				t.Errorf("pool settings\n got %s\nwant %s", show(out.Settings.Pool), show(tc.want))
			}
			if out.Refused {
				t.Error("the object is refused; affinity never refuses")
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

func TestCanaryBehavior(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		legacy      bool
	}{
		{"legacy on a canary", map[string]string{"canary": "true", "affinity-canary-behavior": " legacy "}, true},
		{"legacy on a canary with affinity", map[string]string{"canary": "true", "affinity": "cookie", "affinity-canary-behavior": "legacy"}, true},
		{"sticky on a canary", map[string]string{"canary": "true", "affinity-canary-behavior": "sticky"}, false},
		{"legacy on a main object", map[string]string{"affinity-canary-behavior": "legacy"}, false},
		{"the default", map[string]string{"canary": "true"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			annotations := map[string]string{}
			for k, v := range tc.annotations {
				annotations[registry.Prefix+k] = v
			}
			out := registry.Apply(registry.All(), core.Origin{Kind: "Ingress", Namespace: "app", Name: "web"}, annotations, nil)
			if out.Settings.LegacyCanaryAffinity != tc.legacy {
				t.Errorf("LegacyCanaryAffinity = %v, want %v (findings %v)", out.Settings.LegacyCanaryAffinity, tc.legacy, out.Findings)
			}
		})
	}
}

// show prints pool settings with the content of their pointers.
func show(p core.PoolSettings) string {
	text, _ := json.Marshal(p)
	return string(text)
}
