// Package affinity is the session-affinity family: affinity: cookie and the
// session-cookie-* keys, as ingress-nginx's sticky sessions. The pools of
// the object's paths balance by hashing a cookie: a request without it gets
// one holding a random value, and that value keeps the client on one member
// of a consistent-hashing ring (ingress-nginx's "balanced" mode), or in
// "persistent" mode names the member. Cookie affinity takes precedence over
// upstream-hash-by and load-balance, which yield to it.
package affinity

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

// maxLifetime bounds session-cookie-max-age and -expires, in seconds: the
// largest 32-bit number, far beyond the 400 days browsers keep a cookie.
const maxLifetime = math.MaxInt32

func init() {
	registry.Register(&registry.Family{
		Name: "affinity",
		Doc:  "Session affinity: a cookie keeps each client on one member of the pool.",
		Keys: []registry.Key{
			{Name: "affinity", Validate: validType, Risk: registry.RiskLow, Scope: registry.ScopeBackend,
				Doc:     `"cookie" (the only type, case-sensitive): the pools of the object's paths hash a session cookie that ramjetd sets, so a client keeps going to one member; takes precedence over upstream-hash-by and load-balance.`,
				Differs: "ingress-nginx balances a Service port as the oldest Ingress using it says, for every Ingress; Ramjet gives the paths of each settings combination a pool of their own, so only the objects that ask for affinity get it, each with its own cookie."},
			{Name: "affinity-mode", Validate: registry.Trimmed(registry.OneOf(false, "balanced", "persistent")), Risk: registry.RiskMedium, Scope: registry.ScopeBackend, Default: "balanced",
				Doc: "balanced (case-sensitive): the cookie holds a random token hashed onto a consistent-hashing ring, so when members are added some clients move to them; persistent: the cookie names the client's member, which keeps it for as long as the member exists, whatever members are added (a client whose member is gone gets another one and a new cookie).",
				Differs: "The cookie's value is Ramjet's own (a base-36 token or a hash of the member's address, then | and a hash of the pool's name), so a cookie ingress-nginx set is not understood: each client gets a new member and cookie on its first request through Ramjet, once. " +
					"An invalid value is ignored with a finding (balanced), as ingress-nginx falls back to balanced."},
			{Name: "affinity-canary-behavior", Validate: registry.Trimmed(registry.OneOf(false, "sticky", "legacy")), Risk: registry.RiskLow, Scope: registry.ScopeBackend, Default: "sticky",
				Doc:     "On a canary (canary: \"true\"). sticky: the canary's pool takes the main's session affinity, so a client the canary served (by header, cookie or weight) stays on the canary, and one the main pool served stays there, before any canary rule is looked at (a header asking for the canary included), as ingress-nginx does; legacy: the canary balances as its own annotations say, and only a pool with affinity keeps the clients it served.",
				Differs: "With sticky, a canary whose main has no affinity keeps its own affinity (ingress-nginx copies the main's absence of affinity over it). On an object that is not a canary the key does nothing, as in ingress-nginx, and a finding says so."},
			{Name: "session-cookie-name", Validate: registry.Trimmed(validName), Risk: registry.RiskMedium, Scope: registry.ScopeBackend, Default: config.DefaultAffinityCookie,
				Doc:     "Name of the affinity cookie: a token (letters, digits and !#$%&'*+-.^_`|~).",
				Differs: "Names ingress-nginx takes that are not cookie names (with / or :) are invalid."},
			{Name: "session-cookie-max-age", Validate: registry.Trimmed(validLifetime), Risk: registry.RiskMedium, Scope: registry.ScopeBackend,
				Doc:     "Lifetime of the cookie in seconds, sent as Max-Age and as Expires; 0 or absent: a session cookie, dropped when the browser closes.",
				Differs: "0 makes a session cookie and negative values are invalid, where ingress-nginx sends them as they are and browsers drop the cookie at once, so affinity never held; Ramjet also sends Expires for the same lifetime."},
			{Name: "session-cookie-expires", Validate: registry.Trimmed(validLifetime), Risk: registry.RiskMedium, Scope: registry.ScopeBackend,
				Doc:     "Lifetime of the cookie in seconds when session-cookie-max-age is absent (the same meaning: Max-Age and Expires).",
				Differs: "ingress-nginx sends it as Expires alone, apart from Max-Age; ramjetd has one lifetime and sends both attributes from it, max-age's when both keys are set, which is the one browsers honour anyway."},
			{Name: "session-cookie-path", Validate: registry.Trimmed(validPath), Risk: registry.RiskMedium, Scope: registry.ScopeBackend, Default: "/",
				Doc:     "Path attribute of the cookie: starts with /, printable characters without spaces or ';'.",
				Differs: "ingress-nginx's default is the path of the Ingress rule (a regex path then needs this key); Ramjet's cookie belongs to the pool and defaults to /: the browser sends it on every path of the host."},
			{Name: "session-cookie-domain", Validate: registry.Trimmed(validDomain), Risk: registry.RiskMedium, Scope: registry.ScopeBackend,
				Doc: "Domain attribute of the cookie (example.com also covers its subdomains); absent: the request's host only. Written in lower case."},
			{Name: "session-cookie-samesite", Validate: registry.Trimmed(registry.OneOf(true, "None", "Lax", "Strict")), Risk: registry.RiskLow, Scope: registry.ScopeBackend,
				Doc: "SameSite attribute: None, Lax or Strict, in any case. Browsers drop a SameSite=None cookie that is not Secure (see session-cookie-secure)."},
			{Name: "session-cookie-secure", Validate: registry.Bool, Risk: registry.RiskLow, Scope: registry.ScopeBackend, Default: "false",
				Doc: "true marks the cookie Secure on plain HTTP too; it is always Secure on HTTPS requests."},
			{Name: "session-cookie-conditional-samesite-none", Risk: registry.RiskLow, Scope: registry.ScopeBackend, Default: "false",
				Doc:     "leaves SameSite=None out for the browsers known to mishandle it.",
				Ignored: "SameSite=None is sent to every client; the few old browsers that mishandle it (such as Safari on iOS 12) may not keep affinity"},
			{Name: "session-cookie-change-on-failure", Validate: registry.Bool, Risk: registry.RiskLow, Scope: registry.ScopeBackend, Default: "false",
				Doc:     "true: when a try on the cookie's member fails and the request is retried on another member, the answer carries a new cookie for that member, so the client stays there; false keeps the client's cookie, and its next request tries its member first again.",
				Differs: "With false, ingress-nginx sends the retries of a request to the cookie's member again; Ramjet's retries go to other members (its retry rule) and the cookie is kept."},
			{Name: "session-cookie-partitioned", Risk: registry.RiskLow, Scope: registry.ScopeBackend, Default: "false",
				Doc:     "sets the Partitioned attribute on the cookie.",
				Ignored: "ramjetd does not set the Partitioned attribute; in a cross-site frame, a browser that blocks third-party cookies may not keep affinity"},
		},
		Parse: parse,
	})
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	legacy := canaryBehavior(ctx, values)
	delete(values, "affinity-canary-behavior")
	if _, ok := values["affinity"]; !ok {
		for _, key := range slices.Sorted(maps.Keys(values)) {
			ctx.Invalid(key, "only applies with %saffinity: cookie", registry.Prefix)
		}
		if !legacy {
			return nil
		}
		return func(s *core.Settings) { s.LegacyCanaryAffinity = true }
	}
	value := func(key, def string) string {
		if v, ok := values[key]; ok {
			return strings.TrimSpace(v)
		}
		return def
	}
	cookie := &config.AffinityCookie{
		Name:            value("session-cookie-name", config.DefaultAffinityCookie),
		Path:            value("session-cookie-path", "/"),
		Domain:          strings.ToLower(value("session-cookie-domain", "")),
		MaxAge:          lifetime(values),
		Secure:          registry.IsTrue(values["session-cookie-secure"]),
		SameSite:        sameSite(value("session-cookie-samesite", "")),
		ChangeOnFailure: registry.IsTrue(values["session-cookie-change-on-failure"]),
	}
	if value("affinity-mode", "") == "persistent" {
		cookie.Mode = config.AffinityPersistent
	}
	return func(s *core.Settings) {
		s.Pool.Balance = config.BalanceHash
		s.Pool.Hash = &config.Hash{By: config.HashByCookie, Cookie: cookie}
		s.LegacyCanaryAffinity = legacy
	}
}

// canaryBehavior reports whether affinity-canary-behavior is legacy on a
// canary; on another object the key does nothing, and a finding says so.
func canaryBehavior(ctx *registry.Context, values map[string]string) bool {
	v, ok := values["affinity-canary-behavior"]
	if !ok {
		return false
	}
	if canary, _ := ctx.Value("canary"); !registry.IsTrue(canary) {
		ctx.Invalid("affinity-canary-behavior", "only applies to a canary (%scanary: \"true\")", registry.Prefix)
		return false
	}
	return strings.TrimSpace(v) == "legacy"
}

// lifetime is the cookie's one lifetime: session-cookie-max-age, else
// session-cookie-expires (browsers honour Max-Age over Expires, so
// max-age's is the lifetime ingress-nginx's cookie has too when both are
// set); zero makes a session cookie.
func lifetime(values map[string]string) config.Duration {
	v, ok := values["session-cookie-max-age"]
	if !ok {
		v = values["session-cookie-expires"]
	}
	if v == "" {
		return 0
	}
	n, _ := registry.ParseInt(v, 0, maxLifetime)
	return config.Duration(time.Duration(n) * time.Second)
}

// sameSite spells a validated SameSite value as the data plane takes it.
func sameSite(v string) string {
	for _, s := range []string{"None", "Lax", "Strict"} {
		if strings.EqualFold(s, v) {
			return s
		}
	}
	return ""
}

// trimmed validates the value without the white space around it, which
// ingress-nginx trims and Parse trims too.
func validType(v string) error {
	if strings.TrimSpace(v) != "cookie" {
		return fmt.Errorf("%s is not cookie, the only affinity type", core.Quote(v))
	}
	return nil
}

func validName(v string) error {
	if config.ValidateCookieName(v) != nil {
		return fmt.Errorf("%s is not a cookie name (letters, digits and !#$%%&'*+-.^_`|~)", core.Quote(v))
	}
	return nil
}

func validLifetime(v string) error {
	n, err := strconv.Atoi(v)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return fmt.Errorf("%s is not a number of seconds", core.Quote(v))
	case n < 0:
		return fmt.Errorf("%s is negative: browsers would drop the cookie at once and affinity would never hold", core.Quote(v))
	case err != nil || n > maxLifetime:
		return fmt.Errorf("%s seconds is too long (at most %d)", core.Quote(v), maxLifetime)
	}
	return nil
}

// validPath takes what the data plane takes for a cookie path, and only
// printable ASCII, which is all a cookie path can hold.
func validPath(v string) error {
	if !strings.HasPrefix(v, "/") {
		return fmt.Errorf("%s must start with /", core.Quote(v))
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= ' ' || c >= 0x7f || c == ';' {
			return fmt.Errorf("%s must hold only printable ASCII characters without spaces or ';'", core.Quote(v))
		}
	}
	return nil
}

// validDomain takes a domain, with an optional leading dot, in any case
// (it is written in lower case).
func validDomain(v string) error {
	d := strings.TrimPrefix(strings.ToLower(v), ".")
	if strings.HasPrefix(d, "*") || config.ValidateDomain(d) != nil {
		return fmt.Errorf("%s is not a domain (a cookie domain has no wildcard or port; example.com covers the subdomains)", core.Quote(v))
	}
	return nil
}
