// Package registry holds what is compiled into the controller: the nginx
// annotation families and the inputs. A family registers itself in init()
// (one folder plus one import line in annotations/all), declaring the keys
// it owns with their validation, risk, scope and documentation, and a Parse
// that turns the keys' values of one object into a typed fragment of
// core.Settings. Registration panics on an empty or duplicate name and on a
// key owned twice, so mistakes fail at start. Flags select what is enabled
// (--annotations, --ingress, --gateway-api); documentation and the
// `annotations` subcommand read the same registry.
package registry

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/ramjet-dev/ramjet/core"
)

// Prefix is the prefix of the annotations families own.
const Prefix = "nginx.ingress.kubernetes.io/"

// Risk is how much a key can change, as ingress-nginx's annotation risk
// levels.
type Risk string

// The risk levels.
const (
	RiskLow      Risk = "Low"
	RiskMedium   Risk = "Medium"
	RiskHigh     Risk = "High"
	RiskCritical Risk = "Critical"
)

// Scope is what a key applies to.
type Scope string

// The scopes.
const (
	// ScopeIngress: every path of the object.
	ScopeIngress Scope = "Ingress"
	// ScopeHost: the whole host (app-root, regex mode).
	ScopeHost Scope = "Host"
	// ScopeBackend: the pools of the object's paths.
	ScopeBackend Scope = "Backend"
)

// Key is one annotation key of a family.
type Key struct {
	// Name is the key without Prefix ("rewrite-target"). With Wildcard it
	// is a prefix: "auth-tls-" owns every key that starts with it.
	Name     string
	Wildcard bool
	// Validate checks a value; nil accepts any value within the general
	// rules (at most 4096 bytes, no control characters).
	Validate func(value string) error
	// Risk is ingress-nginx's risk level of the key.
	Risk Risk
	// Scope is what the key applies to.
	Scope Scope
	// Default is the value when the key is absent, for documentation.
	Default string
	// Doc is one line on what the key does in Ramjet; for an Ignored key,
	// what it does in ingress-nginx.
	Doc string
	// Differs says how Ramjet's behaviour differs from ingress-nginx's,
	// for documentation; empty when it does not.
	Differs string
	// Names is the kind of object the key's value names, "name" or
	// "namespace/name" of the object's namespace: the controller keeps the
	// data of the Secrets and ConfigMaps such keys name, and only of them,
	// in memory (see Refs).
	Names ObjectKind
	// Ignored marks a key ingress-nginx has and Ramjet has no counterpart
	// for: it says what happens instead. The key gets an UnknownAnnotation
	// finding with that text and never reaches Parse.
	Ignored string
	// MultiLine lets the value hold line breaks (LF, CR) besides tabs; other
	// control characters are still invalid. Only for keys whose value never
	// reaches the configuration (snippets, which are reported and not
	// interpreted), since a line break in configuration text could forge
	// more of it.
	MultiLine bool
	// List marks a key whose value is a comma-separated list: whitespace,
	// line breaks (LF, CR) included, may surround its entries, as
	// ingress-nginx trims each entry, so that a list written as a YAML
	// block, one entry per line, is read. A line break inside an entry
	// (entries separated by line breaks alone), and every other control
	// character, is still invalid: the family's validator sees entries
	// that are free of them once trimmed.
	List bool
}

// keyNamed returns the key of f that owns name (exactly or by wildcard).
func (f *Family) keyNamed(name string) *Key {
	for i := range f.Keys {
		k := &f.Keys[i]
		if k.Name == name || k.Wildcard && strings.HasPrefix(name, k.Name) {
			return k
		}
	}
	return nil
}

// Family is one nginx annotation family.
type Family struct {
	// Name is how --annotations names the family ("cors").
	Name string
	// Doc is one line on the family.
	Doc string
	// AccessControl marks a fail-closed family: an invalid value, or the
	// family being disabled, makes an object using it not served.
	AccessControl bool
	// Keys are the annotation keys the family owns.
	Keys []Key
	// Parse turns the values of the family's keys on one object (only the
	// keys present and valid) into a fragment; it reports problems through
	// ctx. A nil fragment changes nothing.
	Parse func(ctx *Context, values map[string]string) core.Fragment

	// dir is the folder of the file that registered the family, for the
	// contributor checks (every family has golden cases).
	dir string
}

// Dir is the source folder of the package that registered the family.
func (f *Family) Dir() string { return f.dir }

// Input is a source of objects (Ingress, Gateway API).
type Input struct {
	// Name is the input's flag ("ingress" for --ingress).
	Name string
	// Doc is one line on what the input reads.
	Doc string
	// DefaultOn is the flag's default.
	DefaultOn bool
}

var (
	mu       sync.Mutex
	families = map[string]*Family{}
	keys     = map[string]*Family{} // key name (or wildcard prefix) → family
	inputs   = map[string]*Input{}
)

// Register adds a family. It panics on an empty or duplicate family name,
// a family without keys or Parse, and a key another family owns.
func Register(f *Family) {
	mu.Lock()
	defer mu.Unlock()
	switch {
	case f.Name == "":
		panic("registry: a family without a name")
	case families[f.Name] != nil:
		panic("registry: family " + f.Name + " registered twice")
	case len(f.Keys) == 0 || f.Parse == nil:
		panic("registry: family " + f.Name + " has no keys or no Parse")
	}
	for _, k := range f.Keys {
		if k.Name == "" {
			panic("registry: family " + f.Name + " has a key without a name")
		}
		if owner := keyOwner(k.Name); owner != nil {
			panic(fmt.Sprintf("registry: key %s of family %s is already owned by family %s", k.Name, f.Name, owner.Name))
		}
		if k.Wildcard {
			for name, owner := range keys {
				if strings.HasPrefix(name, k.Name) {
					panic(fmt.Sprintf("registry: wildcard key %s* of family %s covers key %s of family %s", k.Name, f.Name, name, owner.Name))
				}
			}
		}
		keys[k.Name] = f
	}
	if _, file, _, ok := runtime.Caller(1); ok {
		f.dir = filepath.Dir(file)
	}
	families[f.Name] = f
}

// keyOwner returns the family owning key (exactly or by a wildcard).
func keyOwner(key string) *Family {
	if f := keys[key]; f != nil {
		return f
	}
	for name, f := range keys {
		for _, k := range f.Keys {
			if k.Name == name && k.Wildcard && strings.HasPrefix(key, name) {
				return f
			}
		}
	}
	return nil
}

// RegisterInput adds an input; it panics on an empty or duplicate name.
func RegisterInput(in *Input) {
	mu.Lock()
	defer mu.Unlock()
	if in.Name == "" || inputs[in.Name] != nil {
		panic("registry: input " + in.Name + " is unnamed or registered twice")
	}
	inputs[in.Name] = in
}

// Families returns the registered families, sorted by name.
func Families() []*Family {
	mu.Lock()
	defer mu.Unlock()
	out := make([]*Family, 0, len(families))
	for _, f := range families {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b *Family) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Inputs returns the registered inputs, sorted by name.
func Inputs() []*Input {
	mu.Lock()
	defer mu.Unlock()
	out := make([]*Input, 0, len(inputs))
	for _, in := range inputs {
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b *Input) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Owner returns the family owning an annotation key (without Prefix), or
// nil.
func Owner(key string) *Family {
	mu.Lock()
	defer mu.Unlock()
	return keyOwner(key)
}
