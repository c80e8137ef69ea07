package registry

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ramjet-dev/ramjet/core"
)

// The value syntaxes every family shares, as seed 002 states them:
// booleans true or false, durations in seconds or Go-style, sizes with an
// optional k, m or g. Parse functions go with a validator of the same
// name for Key.Validate, so a key's value is checked once, at Apply, and
// parsed without an error path in the family's Parse.

// ParseBool reads a boolean. Besides true and false it takes the other
// spellings ingress-nginx's parser (strconv.ParseBool) accepts, such as
// "True" and "1", so that values that worked there keep working.
func ParseBool(v string) (bool, error) {
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return false, fmt.Errorf("%s is not a boolean (true or false)", core.Quote(v))
	}
	return b, nil
}

// Bool validates a boolean.
func Bool(v string) error {
	_, err := ParseBool(v)
	return err
}

// IsTrue reports whether a validated boolean value is true.
func IsTrue(v string) bool {
	b, _ := ParseBool(v)
	return b
}

// maxDuration bounds durations to what a configuration can mean.
const maxDuration = 365 * 24 * time.Hour

// ParseDuration reads a duration: a number of seconds ("60", as
// ingress-nginx writes timeouts) or a Go duration ("60s", "1m30s").
func ParseDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 || n > int64(maxDuration/time.Second) {
			return 0, fmt.Errorf("%s seconds is out of range (0 to %d)", core.Quote(v), int64(maxDuration/time.Second))
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%s is not a duration (seconds, or like 60s or 1m30s)", core.Quote(v))
	case d < 0 || d > maxDuration:
		return 0, fmt.Errorf("%s is out of range (0 to %s)", core.Quote(v), maxDuration)
	}
	return d, nil
}

// Duration validates a duration.
func Duration(v string) error {
	_, err := ParseDuration(v)
	return err
}

// ParseSize reads a size in bytes: digits with an optional k, m or g
// (either case), powers of 1024, as nginx reads sizes.
func ParseSize(v string) (int64, error) {
	v = strings.TrimSpace(v)
	factor := int64(1)
	if n := len(v); n > 0 {
		switch v[n-1] {
		case 'k', 'K':
			factor = 1 << 10
		case 'm', 'M':
			factor = 1 << 20
		case 'g', 'G':
			factor = 1 << 30
		}
		if factor > 1 {
			v = v[:n-1]
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || strings.HasPrefix(v, "+") {
		return 0, fmt.Errorf("%s is not a size (bytes, or with k, m or g like 8m)", core.Quote(v))
	}
	if n > math.MaxInt64/factor {
		return 0, fmt.Errorf("%s is too large", core.Quote(v))
	}
	return n * factor, nil
}

// Size validates a size.
func Size(v string) error {
	_, err := ParseSize(v)
	return err
}

// ParseInt reads an integer within [lo, hi].
func ParseInt(v string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("%s is not an integer", core.Quote(v))
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%d is out of range (%d to %d)", n, lo, hi)
	}
	return n, nil
}

// Int returns a validator of integers within [lo, hi].
func Int(lo, hi int) func(string) error {
	return func(v string) error {
		_, err := ParseInt(v, lo, hi)
		return err
	}
}

// OneOf returns a validator accepting only the given values; fold makes
// the comparison case-insensitive.
func OneOf(fold bool, allowed ...string) func(string) error {
	return func(v string) error {
		if slices.ContainsFunc(allowed, func(a string) bool { return a == v || fold && strings.EqualFold(a, v) }) {
			return nil
		}
		return fmt.Errorf("%s is not one of %s", core.Quote(v), strings.Join(allowed, ", "))
	}
}

// SecretName validates a reference to a Secret of the object's namespace:
// "name", or "namespace/name" (whose namespace the family checks).
var SecretName = ObjectName(Secret)

// ObjectName returns the validator of a reference to an object of kind in
// the object's namespace: "name", or "namespace/name" (whose namespace the
// family checks with Context.Ref).
func ObjectName(kind ObjectKind) func(string) error {
	return func(v string) error {
		ns, name, found := strings.Cut(v, "/")
		if !found {
			name, ns = ns, ""
		}
		if found && len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
			return fmt.Errorf("%s is not a %s name (name, or namespace/name)", core.Quote(v), kind)
		}
		return nil
	}
}

// Any accepts every value within the general rules: for keys whose
// presence is what counts.
func Any(string) error { return nil }

// SplitList reads a list separated by commas, as ingress-nginx reads its
// CIDR lists: each item trimmed, empty items dropped; nil for none.
func SplitList(v string) []string {
	var out []string
	for item := range strings.SplitSeq(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// Trimmed validates a value with the white space around it removed, as
// ingress-nginx's string parser trims values.
func Trimmed(validate func(string) error) func(string) error {
	return func(v string) error { return validate(strings.TrimSpace(v)) }
}

// IgnoredKey is a key ingress-nginx has and Ramjet has no counterpart for:
// doc says what it does in ingress-nginx, instead what happens in Ramjet.
func IgnoredKey(name string, risk Risk, scope Scope, def, doc, instead string) Key {
	return Key{Name: name, Validate: Any, Risk: risk, Scope: scope, Default: def, Doc: doc, Ignored: instead}
}

// Present lists the keys of values other than those given, with Prefix and
// sorted: for findings that name the keys an object carries.
func Present(values map[string]string, except ...string) []string {
	var keys []string
	for k := range values {
		if !slices.Contains(except, k) {
			keys = append(keys, Prefix+k)
		}
	}
	slices.Sort(keys)
	return keys
}
