// Package globalratelimit is the global rate limit family:
// global-rate-limit, global-rate-limit-window, global-rate-limit-key and
// global-rate-limit-ignored-cidrs, with ingress-nginx's semantics: each key
// (by default the client address) may make global-rate-limit requests per
// window to the Ingress's paths and hosts, counted in memcached and so
// shared by every replica (ramjetd's global_rate_limit policy, with
// lua-resty-global-throttle's sliding window). The controller serves it only
// with --global-rate-limit-memcached-host (sources/ingress drops it with a
// finding otherwise, and serves the rest of the object).
//
// It fails closed as the rate-limit family does: an Ingress whose
// global-rate-limit keys are not valid is not served, so that a typo never
// serves a limited application without its limit (ingress-nginx denies the
// location for a bad window, and drops the limit for the other keys).
package globalratelimit

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

// The keys.
const (
	limitKey   = "global-rate-limit"
	windowKey  = "global-rate-limit-window"
	keyKey     = "global-rate-limit-key"
	ignoredKey = "global-rate-limit-ignored-cidrs"
)

// DefaultKey is ingress-nginx's global-rate-limit-key default.
const DefaultKey = "$remote_addr"

func init() {
	registry.Register(&registry.Family{
		Name:          "global-rate-limit",
		Doc:           "Requests per window of each client address (or key), counted in memcached and shared by every replica.",
		AccessControl: true,
		Keys: []registry.Key{
			{Name: limitKey, Validate: validLimit, Risk: registry.RiskLow, Scope: registry.ScopeIngress,
				Doc: "Requests each key may make per global-rate-limit-window to the Ingress's paths, all replicas together; 429 above (--global-rate-limit-status-code).",
				Differs: "Served only with the controller's --global-rate-limit-memcached-host (chart value ingressController.globalRateLimit.memcachedHost); without it the limit is dropped with a finding and the rest of the object served " +
					"(ingress-nginx's admission webhook refuses the Ingress; without the webhook it serves it unlimited). 0 sets no limit, as in ingress-nginx. " +
					"A value that is not an integer, is negative or over 1000000000 makes the object not served (ingress-nginx drops the limit, and refuses every request for a negative one). " +
					"Counted per Ingress (its UID), shared by all its paths and hosts, as ingress-nginx. Refusals are remembered in each replica for as long as the sliding window says the key stays over (ingress-nginx's global_throttle_cache). " +
					"When memcached cannot be used the request passes, as in ingress-nginx; ramjetd counts it in ramjet_global_rate_limit_requests_total{outcome=\"failed_open\"} and logs it at most every 10 s. " +
					"ingress-nginx's $global_rate_limit_exceeding log variable has no counterpart: the same metric counts the outcomes (passed, refused, refused_cached)."},
			{Name: windowKey, Validate: validWindow, Risk: registry.RiskLow, Scope: registry.ScopeIngress,
				Doc: "The window of global-rate-limit, a duration such as 1m or 1h30m; required with it.",
				Differs: "Whole seconds are kept, as ingress-nginx. A value that is not a duration, or under 1s, or over 168h, makes the object not served " +
					"(ingress-nginx denies the location for a value that does not parse, and sets no limit for one under 1s). " +
					"Without it global-rate-limit sets no limit, as in ingress-nginx (a finding says so)."},
			{Name: keyKey, Validate: validKey, Risk: registry.RiskHigh, Scope: registry.ScopeIngress, Default: DefaultKey,
				Doc: "What requests are counted by: nginx variables and text, such as ${remote_addr}-${http_x_api_client}.",
				Differs: "The variables are $remote_addr (and $binary_remote_addr, counted as the address), $http_<name> (a request header, the first value) and $cookie_<name>, written $name or ${name}, with any text between. " +
					"Another variable makes the object not served (ingress-nginx takes any variable, and falls back to $remote_addr for a value it refuses). " +
					"A key empty for a request counts by the client address, as in ingress-nginx."},
			{Name: ignoredKey, Validate: validRanges, List: true, Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc:     "Comma-separated client CIDRs or addresses that are neither counted nor limited.",
				Differs: "At most 1024. An entry that does not parse makes the object not served (ingress-nginx drops the limit)."},
		},
		Parse: parse,
	})
}

// parse reads the family's keys, which their validators have checked.
func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	if ctx.Rejected(limitKey) || ctx.Rejected(windowKey) {
		return nil // the object is not served; its finding names the key
	}
	limit, _ := strconv.Atoi(strings.TrimSpace(values[limitKey]))
	window, hasWindow := values[windowKey]
	if limit == 0 || !hasWindow || strings.TrimSpace(window) == "" {
		ignoredWithout(ctx, values, limit != 0)
		return nil
	}
	d, _ := time.ParseDuration(strings.TrimSpace(window))
	g := &config.GlobalRateLimit{
		Namespace: namespaceOf(ctx.Object),
		Limit:     uint32(limit),
		Window:    config.Duration(d.Truncate(time.Second)),
	}
	if v, ok := values[keyKey]; ok && strings.TrimSpace(v) != "" {
		g.Key, _ = ParseKey(strings.TrimSpace(v))
		if len(g.Key) == 1 && g.Key[0].ClientAddress {
			g.Key = nil // the default
		}
	}
	if v, ok := values[ignoredKey]; ok {
		g.IgnoredRanges = registry.SplitList(v)
	}
	return func(s *core.Settings) { s.Policies.GlobalRateLimit = g }
}

// ignoredWithout reports the keys that have no effect without both
// global-rate-limit and its window.
func ignoredWithout(ctx *registry.Context, values map[string]string, hasLimit bool) {
	p := registry.Prefix
	if hasLimit {
		ctx.Note(core.UnknownAnnotation, "%s%s sets no limit without %s%s, as in ingress-nginx", p, limitKey, p, windowKey)
		return
	}
	for _, k := range []string{windowKey, keyKey, ignoredKey} {
		if _, ok := values[k]; ok {
			ctx.Note(core.UnknownAnnotation, "%s%s is ignored: it has no effect without %s%s", p, k, p, limitKey)
		}
	}
}

// namespaceOf is the prefix of an Ingress's counters: its UID without
// dashes, as ingress-nginx; namespace_name for objects without one (read
// from files).
func namespaceOf(o core.Origin) string {
	if o.UID != "" {
		return strings.ReplaceAll(o.UID, "-", "")
	}
	return o.Namespace + "_" + o.Name
}

// validLimit accepts 0..MaxGlobalRateLimit.
func validLimit(v string) error {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	switch {
	case err != nil:
		return fmt.Errorf("%s is not an integer", core.Quote(v))
	case n < 0:
		return fmt.Errorf("must be 0 (no limit) or more")
	case n > config.MaxGlobalRateLimit:
		return fmt.Errorf("%d is over %d", n, config.MaxGlobalRateLimit)
	}
	return nil
}

// validWindow accepts a duration of 1s..MaxGlobalRateLimitWindow (an empty
// value sets no limit, as in ingress-nginx).
func validWindow(v string) error {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return fmt.Errorf("%s is not a duration (such as 1m or 1h30m)", core.Quote(v))
	case d < time.Second:
		return fmt.Errorf("%s is under 1s", core.Quote(v))
	case d > config.MaxGlobalRateLimitWindow:
		return fmt.Errorf("%s is over %s", core.Quote(v), config.MaxGlobalRateLimitWindow)
	}
	return nil
}

// validKey accepts what ParseKey does.
func validKey(v string) error {
	_, err := ParseKey(strings.TrimSpace(v))
	return err
}

// validRanges checks a list of CIDRs and addresses.
func validRanges(v string) error { return config.CheckRanges(registry.SplitList(v)) }
