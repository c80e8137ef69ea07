// Package nginxconfig turns ingress-nginx's controller ConfigMap into the
// values of Ramjet's Helm chart that carry the same settings, and says of
// every other key what happens instead. It is the migration aid behind
// `ramjet-ingress translate --nginx-configmap`.
//
// Every key of ingress-nginx's ConfigMap (the keys of its v1.15
// documentation, and those older releases had and later removed) has a
// rule in keys.go; a key without one is reported as unknown.
package nginxconfig

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Status says what became of one ConfigMap key.
type Status string

// The statuses of a key.
const (
	// Mapped keys set chart values.
	Mapped Status = "mapped"
	// Same keys ask for what Ramjet does anyway: nothing to set.
	Same Status = "same"
	// NoCounterpart keys have no Ramjet setting; Note says what happens.
	NoCounterpart Status = "no-counterpart"
	// Invalid keys have a value ingress-nginx itself would not take.
	Invalid Status = "invalid"
	// Unknown keys are not ingress-nginx ConfigMap keys Ramjet knows of.
	Unknown Status = "unknown"
)

// Setting is one chart value: its dotted path in values.yaml and its value.
type Setting struct {
	Path  string `json:"path" yaml:"path"`
	Value any    `json:"value" yaml:"value"`
}

// Key is the outcome of one ConfigMap key.
type Key struct {
	Key    string `json:"key" yaml:"key"`
	Status Status `json:"status" yaml:"status"`
	// Settings are the chart values the key gives (Mapped only).
	Settings []Setting `json:"settings,omitempty" yaml:"settings,omitempty"`
	// Note says what happens instead, how the setting differs, or why
	// the value is invalid.
	Note string `json:"note,omitempty" yaml:"note,omitempty"`
	// Default marks a key absent from the ConfigMap whose ingress-nginx
	// default differs from Ramjet's, and is carried over.
	Default bool `json:"default,omitempty" yaml:"default,omitempty"`
}

// Result is the translation of one ConfigMap.
type Result struct {
	// Values are the chart values, nested as values.yaml nests them.
	Values map[string]any `json:"values" yaml:"values"`
	// Keys are the ConfigMap's keys, and the defaults carried over, in
	// the order of their names.
	Keys []Key `json:"keys" yaml:"keys"`
}

// Translate translates the data of ingress-nginx's controller ConfigMap.
func Translate(data map[string]string) *Result {
	res := &Result{Values: map[string]any{}}
	for name, value := range data {
		res.add(name, outcomeOf(name, value, data))
	}
	for _, r := range rules {
		if _, set := data[r.key]; !set && r.nginxDefault != "" {
			o := r.apply(r.nginxDefault, data)
			if o.status == Mapped || o.status == NoCounterpart {
				o.note = strings.TrimSuffix("absent, ingress-nginx's default is "+quote(r.nginxDefault)+", which Ramjet's is not; "+o.note, "; ")
				res.addDefault(r.key, o)
			}
		}
	}
	slices.SortFunc(res.Keys, func(a, b Key) int { return cmp.Compare(a.Key, b.Key) })
	for _, k := range res.Keys {
		for _, s := range k.Settings {
			res.set(s)
		}
	}
	return res
}

func outcomeOf(name, value string, data map[string]string) outcome {
	r, ok := ruleOf(name)
	if !ok {
		return outcome{status: Unknown, note: "not a key of ingress-nginx's ConfigMap that Ramjet knows of (a misspelling, or a key of another controller): it has no effect in ingress-nginx either"}
	}
	return r.apply(strings.TrimSpace(value), data)
}

func (res *Result) add(name string, o outcome) {
	res.Keys = append(res.Keys, Key{Key: name, Status: o.status, Settings: o.settings, Note: o.note})
}

func (res *Result) addDefault(name string, o outcome) {
	res.Keys = append(res.Keys, Key{Key: name, Status: o.status, Settings: o.settings, Note: o.note, Default: true})
}

// set puts a setting into Values at its dotted path.
func (res *Result) set(s Setting) {
	parts := strings.Split(s.Path, ".")
	m := res.Values
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = s.Value
}

// quote shows a value of the ConfigMap in a note, escaped so that it
// cannot break the line or the comment it stands in.
func quote(v string) string { return fmt.Sprintf("%q", v) }
