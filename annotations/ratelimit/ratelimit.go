// Package ratelimit is the rate-limit family: limit-rps, limit-rpm,
// limit-burst-multiplier, limit-connections, limit-allowlist (and its older
// name limit-whitelist), limit-rate and limit-rate-after, with
// ingress-nginx's semantics: the limits count per client address in one
// zone per Ingress, shared by all its paths and hosts, in each replica on
// its own. It fails closed as ingress-nginx does: an Ingress whose
// limit-rps, limit-rpm, limit-connections or allow list is not valid is not
// served (ingress-nginx rejects it), so that a typo never serves a limited
// application without its limit. The keys ingress-nginx reads leniently
// (the multiplier, limit-rate, limit-rate-after) fail closed too: their
// fallback would serve the object otherwise than it asks.
package ratelimit

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

// The keys.
const (
	rps        = "limit-rps"
	rpm        = "limit-rpm"
	multiplier = "limit-burst-multiplier"
	conns      = "limit-connections"
	allowlist  = "limit-allowlist"
	whitelist  = "limit-whitelist"
	rate       = "limit-rate"
	rateAfter  = "limit-rate-after"
)

// DefaultBurstMultiplier is ingress-nginx's limit-burst-multiplier default.
const DefaultBurstMultiplier = 5

// maxKiB bounds limit-rate and limit-rate-after: 1 TiB.
const maxKiB = 1 << 30

const (
	countDiffers = "Counted per client address in one zone per Ingress and per replica, as ingress-nginx. " +
		"0 or less sets no limit, as in ingress-nginx. A value that is not an integer, or is over 1000000, makes the object not served " +
		"(ingress-nginx rejects a value that is not an integer, and takes any other). " +
		"A zone holds server.limits.rate_limit_zone_clients clients per limit (16384 by default, 128 KiB; " +
		"nginx's 5 MB zone holds about 80,000): when a group of 8 is full, the client with the emptiest bucket gives up its place."
	requestDiffers = countDiffers + " A client whose bucket is empty makes limit × limit-burst-multiplier + 1 requests at once " +
		"(nginx lets a client it still remembers make one less). Over the limit: 503, or --limit-status-code."
	allowDiffers = "Comma-separated CIDRs or addresses whose clients are not counted, at most 1024. " +
		"An entry that does not parse makes the object not served (ingress-nginx rejects the Ingress); an empty value sets no allow list. " +
		"Without limit-rps, limit-rpm or limit-connections it has no effect, as in ingress-nginx (a finding says so)."
	rateDiffers = "In KiB (ingress-nginx renders the value with nginx's k); 0 or less sets no limit. " +
		"A value that is not an integer, or is over 1073741824, makes the object not served (ingress-nginx falls back to its ConfigMap's value). " +
		"It applies to the answer's body whatever proxy-buffering says (ingress-nginx documents it as needing proxy-buffering); nginx counts the head too."
)

func init() {
	registry.Register(&registry.Family{
		Name:          "rate-limit",
		Doc:           "Request rates, requests in flight and answer bandwidth, per client address.",
		AccessControl: true,
		Keys: []registry.Key{
			{Name: rps, Validate: integer(config.MaxRateLimitRate), Risk: registry.RiskLow, Scope: registry.ScopeIngress,
				Doc:     "Requests per second each client address may make to the Ingress's paths, with a burst of limit-burst-multiplier times as many; 503 above.",
				Differs: requestDiffers},
			{Name: rpm, Validate: integer(config.MaxRateLimitRate), Risk: registry.RiskLow, Scope: registry.ScopeIngress,
				Doc:     "Requests per minute each client address may make, with a burst of limit-burst-multiplier times as many; with limit-rps too, a request must pass both.",
				Differs: requestDiffers},
			{Name: multiplier, Validate: validMultiplier, Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: strconv.Itoa(DefaultBurstMultiplier),
				Doc: "The burst of limit-rps and limit-rpm: how many times their limit a client may make at once above it.",
				Differs: "A value that is not an integer, is negative or over 100000000 makes the object not served " +
					"(ingress-nginx takes 5 for a value that is not an integer; a negative burst makes nginx refuse its whole configuration). A burst over 100000000 counts as 100000000."},
			{Name: conns, Validate: integer(config.MaxRateLimitConnections), Risk: registry.RiskLow, Scope: registry.ScopeIngress,
				Doc:     "Requests in flight each client address may have at once (each HTTP/2 stream counts); 503 above.",
				Differs: countDiffers + " A new client whose group of 8 holds 8 other clients with requests in flight is refused, as nginx refuses when its zone is full."},
			{Name: allowlist, Validate: validAllowList, List: true, Risk: registry.RiskLow, Scope: registry.ScopeIngress,
				Doc:     "Client CIDRs that limit-rps, limit-rpm and limit-connections do not count.",
				Differs: allowDiffers},
			{Name: whitelist, Validate: validAllowList, List: true, Risk: registry.RiskLow, Scope: registry.ScopeIngress,
				Doc:     "The older name of limit-allowlist, used when that is absent or empty.",
				Differs: allowDiffers + " An invalid value makes the object not served even when limit-allowlist is set (ingress-nginx does not read it then)."},
			{Name: rate, Validate: integer(maxKiB), Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "0",
				Doc:     "Bandwidth of each answer's body, in KiB per second, after limit-rate-after; the answer may run one second ahead, as nginx's limit_rate.",
				Differs: rateDiffers},
			{Name: rateAfter, Validate: integer(maxKiB), Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "0",
				Doc:     "KiB of each answer's body sent at full speed before limit-rate applies; without limit-rate it has no effect.",
				Differs: rateDiffers},
		},
		Parse: parse,
	})
}

// parse reads the family's keys, which their validators have checked.
func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	rl := &config.RateLimit{
		RPS:         uint32(max(0, number(values, rps))),
		RPM:         uint32(max(0, number(values, rpm))),
		Connections: uint32(max(0, number(values, conns))),
		Rate:        kib(values, rate),
		RateAfter:   kib(values, rateAfter),
	}
	mult := uint64(DefaultBurstMultiplier)
	if _, ok := values[multiplier]; ok {
		mult = uint64(number(values, multiplier))
	}
	allow, allowKey := allowList(values)
	if rl.Counts() {
		o := ctx.Object
		rl.Zone = o.Namespace + "/" + o.Name + "/" + o.UID
		rl.RPSBurst = burst(rl.RPS, mult)
		rl.RPMBurst = burst(rl.RPM, mult)
		rl.Allowlist = allow
	} else if len(allow) > 0 {
		ctx.Note(core.UnknownAnnotation, "%s%s is ignored: it has no effect without %s%s, %s%s or %s%s", registry.Prefix, allowKey, registry.Prefix, rps, registry.Prefix, rpm, registry.Prefix, conns)
	}
	if rl.Rate == 0 {
		rl.RateAfter = 0
	}
	if !rl.Counts() && rl.Rate == 0 {
		return nil
	}
	return func(s *core.Settings) { s.Policies.RateLimit = rl }
}

// number is the integer value of key, 0 when it is absent.
func number(values map[string]string, key string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(values[key]))
	return n
}

// integer returns a validator of integers up to limit (any negative one
// sets no limit, as in ingress-nginx).
func integer(limit int) func(string) error {
	return func(v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		switch {
		case err != nil:
			return fmt.Errorf("%s is not an integer", core.Quote(v))
		case n > limit:
			return fmt.Errorf("%d is over %d", n, limit)
		}
		return nil
	}
}

// validMultiplier accepts 0..MaxRateLimitBurst.
func validMultiplier(v string) error {
	if err := integer(config.MaxRateLimitBurst)(v); err != nil {
		return err
	}
	if number(map[string]string{multiplier: v}, multiplier) < 0 {
		return fmt.Errorf("must be 0 or more")
	}
	return nil
}

// allowList returns the allow list's entries and the key they come from:
// the older name counts only when the new one is absent or empty, as
// ingress-nginx reads aliases.
func allowList(values map[string]string) ([]string, string) {
	key := allowlist
	if strings.TrimSpace(values[key]) == "" {
		if _, ok := values[whitelist]; ok {
			key = whitelist
		}
	}
	v, ok := values[key]
	if !ok {
		return nil, ""
	}
	return registry.SplitList(v), key
}

// burst is limit × multiplier within the data plane's bound.
func burst(limit uint32, mult uint64) uint32 {
	if mult > 0 && uint64(limit) > config.MaxRateLimitBurst/mult {
		return config.MaxRateLimitBurst
	}
	return uint32(uint64(limit) * mult)
}

// kib reads a size in KiB; 0 or less means none.
func kib(values map[string]string, key string) config.ByteSize {
	return config.ByteSize(max(0, number(values, key))) << 10
}

// validAllowList checks a list of CIDRs and addresses.
func validAllowList(v string) error { return config.CheckRanges(registry.SplitList(v)) }
