package nginxconfig

import (
	"slices"
	"strings"

	"github.com/ramjet-dev/ramjet/registry"
	"github.com/ramjet-dev/ramjet/sources/ingress"
)

// rule is what Ramjet does with one ConfigMap key, or with every key that
// starts with key when prefix is set.
type rule struct {
	key    string
	prefix bool
	// nginxDefault, when set, is ingress-nginx's value of an absent key
	// whose effect Ramjet's own default does not have: it is translated
	// as if the ConfigMap held it.
	nginxDefault string
	// annotation names the annotation whose default a perIngress key
	// sets for every Ingress.
	annotation string
	apply      func(value string, data map[string]string) outcome
}

// outcome is what one key's value gives.
type outcome struct {
	status   Status
	settings []Setting
	note     string
}

func mapped(note string, settings ...Setting) outcome {
	return outcome{status: Mapped, settings: settings, note: note}
}

func same(note string) outcome          { return outcome{status: Same, note: note} }
func noCounterpart(note string) outcome { return outcome{status: NoCounterpart, note: note} }
func invalid(note string) outcome       { return outcome{status: Invalid, note: note} }

// ruleOf finds the rule of a key.
func ruleOf(key string) (rule, bool) {
	for _, r := range rules {
		if r.key == key || r.prefix && strings.HasPrefix(key, r.key) {
			return r, true
		}
	}
	return rule{}, false
}

// none gives the keys no counterpart, each with note.
func none(note string, keys ...string) []rule {
	out := make([]rule, len(keys))
	for i, k := range keys {
		out[i] = rule{key: k, apply: func(string, map[string]string) outcome { return noCounterpart(note) }}
	}
	return out
}

// prefixes gives every key starting with one of the prefixes no
// counterpart.
func prefixes(note string, ps ...string) []rule {
	out := none(note, ps...)
	for i := range out {
		out[i].prefix = true
	}
	return out
}

// sameWhen is a key whose value ramjetd's behaviour matches when it is
// one of values; any other value has no counterpart, as note says.
func sameWhen(key, note string, values ...string) rule {
	return rule{key: key, apply: func(v string, _ map[string]string) outcome {
		for _, s := range values {
			if strings.EqualFold(v, s) {
				return same("what Ramjet does: " + note)
			}
		}
		return noCounterpart(note)
	}}
}

// perIngress is a key that sets the default of the annotation of the same
// name (or of annotation) for every Ingress: Ramjet has no controller-wide
// default for it, so the annotation's own applies.
func perIngress(key, annotation string) rule {
	if annotation == "" {
		annotation = key
	}
	return rule{key: key, annotation: annotation, apply: func(v string, _ map[string]string) outcome {
		def, served := annotationDefault(annotation)
		name := "the annotation " + annotation
		switch {
		case !served:
			return noCounterpart(name + " is not served by Ramjet (see docs/annotations.md), so there is no default to set")
		case strings.EqualFold(v, def):
			return same("the default of " + name + " is " + quote(def) + " too")
		case slices.Contains(ingress.ControllerDefaultKeys, annotation):
			if err := registry.CheckValue(annotation, v); err != nil {
				return invalid(err.Error())
			}
			return mapped("the value of "+name+" for every Ingress that does not have it (--annotation-default)",
				Setting{"ingressController.annotationDefaults." + annotation, v})
		case def == "":
			return noCounterpart("Ramjet has no controller-wide default for " + name + ": Ingresses without it get Ramjet's behaviour (docs/annotations.md); give the annotation to the Ingresses that relied on this value")
		default:
			return noCounterpart("Ramjet has no controller-wide default for " + name + ", whose default is " + quote(def) + ": give the annotation to the Ingresses that relied on this value")
		}
	}}
}

// annotationDefault looks an annotation up in the registry: its
// documented default, and whether Ramjet serves it.
func annotationDefault(name string) (string, bool) {
	f := registry.Owner(name)
	if f == nil {
		return "", false
	}
	for _, k := range f.Keys {
		if k.Name == name || k.Wildcard && strings.HasPrefix(name, k.Name) {
			return k.Default, k.Ignored == ""
		}
	}
	return "", false
}
