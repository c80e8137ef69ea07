package extauth

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

// keyVariables are the nginx variables of auth-cache-key and the request
// attribute of ramjetd's cache key each is; $http_<name> and
// $cookie_<name> are handled apart.
var keyVariables = map[string]string{
	"request_method": "method",
	"scheme":         "scheme",
	"host":           "host",
	"http_host":      "host",
	"request_uri":    "uri",
	"uri":            "path",
	"remote_addr":    "client_ip",
}

// variableRE finds an nginx variable: $name or ${name}.
var variableRE = regexp.MustCompile(`\$(\{[A-Za-z0-9_]+\}|[A-Za-z0-9_]+)`)

// keyParts turns the variables of an auth-cache-key value into the parts
// of ramjetd's cache key, in order and without repeats.
func keyParts(v string) ([]string, error) {
	var parts []string
	for _, m := range variableRE.FindAllStringSubmatch(v, -1) {
		part, err := keyPart(strings.Trim(m[1], "{}"))
		if err != nil {
			return nil, err
		}
		if !slices.Contains(parts, part) {
			parts = append(parts, part)
		}
	}
	switch {
	case len(parts) == 0:
		return nil, fmt.Errorf("%s holds no nginx variable: every client would share one outcome", core.Quote(v))
	case len(parts) > config.MaxAuthCacheKeyParts:
		return nil, fmt.Errorf("%s holds %d variables, at most %d", core.Quote(v), len(parts), config.MaxAuthCacheKeyParts)
	}
	return parts, nil
}

func keyPart(name string) (string, error) {
	if part, ok := keyVariables[name]; ok {
		return part, nil
	}
	if header, ok := strings.CutPrefix(name, "http_"); ok && header != "" {
		return "header:" + headerName(header), nil
	}
	if cookie, ok := strings.CutPrefix(name, "cookie_"); ok && cookie != "" {
		return "cookie:" + cookie, nil
	}
	return "", fmt.Errorf("$%s is not a variable the cache key may hold: write $request_method, $scheme, $host, $http_host, $request_uri, $uri, $remote_addr, $http_<name> or $cookie_<name>", name)
}

// headerName is the header an nginx $http_ variable reads: '_' for '-',
// each word capitalised (header names compare without case).
func headerName(v string) string {
	words := strings.Split(v, "_")
	for i, w := range words {
		if w != "" {
			words[i] = strings.ToUpper(w[:1]) + strings.ToLower(w[1:])
		}
	}
	return strings.Join(words, "-")
}

func validateCacheKey(v string) error {
	_, err := keyParts(v)
	return err
}

// durations are the times of auth-cache-duration by outcome class.
type durations struct {
	allowed, unauthorized, forbidden *time.Duration
}

// statusRE and timeRE are the elements of an entry of auth-cache-duration,
// as ingress-nginx reads them.
var (
	statusRE = regexp.MustCompile(`^[0-9]{3}$`)
	timeRE   = regexp.MustCompile(`^([0-9]+)(ms|s|m|h|d|w|M|y)$`)
)

// maxDurationText is config.MaxAuthCacheDuration as findings write it.
const maxDurationText = "24h"

// timeUnits are nginx's time units.
var timeUnits = map[string]time.Duration{
	"ms": time.Millisecond, "s": time.Second, "m": time.Minute, "h": time.Hour,
	"d": 24 * time.Hour, "w": 7 * 24 * time.Hour, "M": 30 * 24 * time.Hour, "y": 365 * 24 * time.Hour,
}

// parseDurations reads auth-cache-duration: comma-separated entries of
// status codes (none is 200, any is every class) and a time.
func parseDurations(v string) (durations, error) {
	var d durations
	entries := 0
	for entry := range strings.SplitSeq(v, ",") {
		if trim(entry) == "" {
			continue
		}
		entries++
		codes, t, err := parseEntry(trim(entry))
		if err != nil {
			return d, err
		}
		for _, code := range codes {
			if err := d.set(code, t); err != nil {
				return d, fmt.Errorf("%s: %w", core.Quote(trim(entry)), err)
			}
		}
	}
	if entries == 0 {
		return d, fmt.Errorf("%s has no entry", core.Quote(v))
	}
	return d, nil
}

// parseEntry reads one entry: codes, then one or more times that add up.
func parseEntry(entry string) ([]string, time.Duration, error) {
	var codes []string
	var total time.Duration
	timed := false
	for _, el := range strings.Fields(entry) {
		m := timeRE.FindStringSubmatch(el)
		switch {
		case (statusRE.MatchString(el) || el == "any") && !timed:
			codes = append(codes, el)
		case m != nil:
			n, err := strconv.ParseInt(m[1], 10, 64)
			if err != nil || n > int64(config.MaxAuthCacheDuration/timeUnits[m[2]]) {
				return nil, 0, fmt.Errorf("%s: %s is more than %s", core.Quote(entry), el, maxDurationText)
			}
			total += time.Duration(n) * timeUnits[m[2]]
			timed = true
		default:
			return nil, 0, fmt.Errorf("%s: %s is neither a status code before the time nor a time (a number and ms, s, m, h, d, w, M or y)", core.Quote(entry), core.Quote(el))
		}
	}
	switch {
	case !timed:
		return nil, 0, fmt.Errorf("%s has no time", core.Quote(entry))
	case total > config.MaxAuthCacheDuration:
		return nil, 0, fmt.Errorf("%s: %s is more than %s", core.Quote(entry), total, maxDurationText)
	case len(codes) == 0:
		codes = []string{"200"}
	}
	return codes, total, nil
}

// set records the time of a status code by its class; other codes are
// never remembered by ramjetd (they answer 500).
func (d *durations) set(code string, t time.Duration) error {
	if code == "any" {
		for _, c := range []string{"200", "401", "403"} {
			if err := d.set(c, t); err != nil {
				return err
			}
		}
		return nil
	}
	var slot **time.Duration
	switch {
	case code == "401":
		slot = &d.unauthorized
	case code == "403":
		slot = &d.forbidden
	case code[0] == '2':
		slot = &d.allowed
	default:
		return nil
	}
	if *slot != nil && **slot != t {
		return fmt.Errorf("status %s is given %s, and another code of its class (2xx, 401 or 403) %s: ramjetd remembers a class for one time", code, t, **slot)
	}
	*slot = &t
	return nil
}

func validateCacheDuration(v string) error {
	_, err := parseDurations(v)
	return err
}

// cache is the outcome cache of auth-cache-key and auth-cache-duration,
// nil without a key or when every time is zero (nothing is remembered).
func cache(ctx *registry.Context, values map[string]string) *config.AuthCache {
	rawKey, ok := values[keyCacheKey]
	if !ok {
		if _, ok := values[keyCacheDuration]; ok {
			ctx.Note(core.UnknownAnnotation, "%s%s applies only with %s%s, which the object does not have; it is ignored", registry.Prefix, keyCacheDuration, registry.Prefix, keyCacheKey)
		}
		return nil
	}
	parts, _ := keyParts(trim(rawKey))
	spec, ok := values[keyCacheDuration]
	if !ok {
		spec = "200 202 401 5m"
	}
	d, _ := parseDurations(spec)
	c := &config.AuthCache{Key: parts, Allowed: orZero(d.allowed), Unauthorized: orZero(d.unauthorized), Forbidden: orZero(d.forbidden)}
	if c.Allowed == 0 && c.Unauthorized == 0 && c.Forbidden == 0 {
		return nil
	}
	return c
}

func orZero(d *time.Duration) config.Duration {
	if d == nil {
		return 0
	}
	return config.Duration(*d)
}
