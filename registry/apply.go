package registry

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ramjet-dev/ramjet/core"
)

// MaxValueBytes bounds an annotation value.
const MaxValueBytes = 4096

// Objects looks up the Secrets and ConfigMaps that families read (basic
// auth, TLS to members, headers for external authentication).
type Objects interface {
	// Secret returns the data of a Secret, and whether it exists.
	Secret(namespace, name string) (map[string][]byte, bool)
	// ConfigMap returns the data of a ConfigMap, and whether it exists.
	ConfigMap(namespace, name string) (map[string]string, bool)
}

// ObjectKind is a kind of object an annotation can name.
type ObjectKind int

// The kinds of object an annotation can name.
const (
	// NoObject: the value names no object.
	NoObject ObjectKind = iota
	Secret
	ConfigMap
)

// String is the kind's name ("Secret").
func (k ObjectKind) String() string {
	switch k {
	case Secret:
		return "Secret"
	case ConfigMap:
		return "ConfigMap"
	}
	return "object"
}

// Context is what a family's Parse works with: the object and a way to
// report problems.
type Context struct {
	Object  core.Origin
	objects Objects
	family  *Family
	result  *Applied
	// valid are the object's keys (without Prefix) whose family is enabled
	// and whose value is valid; rejected those whose value is not.
	valid    map[string]string
	rejected map[string]bool
}

// Rejected reports whether the object has key with a value that was
// refused (by the general rules or the key's validator): a family whose
// fallback for a missing key would widen access (CORS origins default to
// "*") turns itself off instead.
func (c *Context) Rejected(key string) bool { return c.rejected[key] }

// Value returns the value of another key of the object, when it is
// present, valid and its family enabled: how a family sees the keys it
// depends on (proxy-ssl-* on backend-protocol) or yields to (load-balance
// to upstream-hash-by).
func (c *Context) Value(key string) (string, bool) {
	v, ok := c.valid[key]
	return v, ok
}

// Ref resolves a reference to an object of kind written in key: "name",
// or "namespace/name" naming the object's own namespace. It is the one
// check for references of annotations: an object of another namespace is
// never read, and the reference is reported invalid.
func (c *Context) Ref(kind ObjectKind, key, ref string) (string, bool) {
	ns, name, found := strings.Cut(ref, "/")
	if !found {
		return ref, true
	}
	if ns != c.Object.Namespace {
		c.Invalid(key, "%s is in another namespace; only %ss of the object's namespace are read", core.Quote(ref), kind)
		return "", false
	}
	return name, true
}

// Secret returns a Secret of the object's namespace.
func (c *Context) Secret(name string) (map[string][]byte, bool) {
	if c.objects == nil {
		return nil, false
	}
	return c.objects.Secret(c.Object.Namespace, name)
}

// ConfigMap returns a ConfigMap of the object's namespace.
func (c *Context) ConfigMap(name string) (map[string]string, bool) {
	if c.objects == nil {
		return nil, false
	}
	return c.objects.ConfigMap(c.Object.Namespace, name)
}

// Invalid reports an invalid value of key. For an access-control family
// the object is not served; for the others the key is ignored and the
// route keeps its default.
func (c *Context) Invalid(key, format string, args ...any) {
	msg := fmt.Sprintf("%s%s: %s", Prefix, key, fmt.Sprintf(format, args...))
	if c.family.AccessControl {
		c.Refuse(core.InvalidAnnotation, "%s; the object is not served", msg)
		return
	}
	c.Note(core.InvalidAnnotation, "%s; the key is ignored", msg)
}

// Refuse makes the object not served, with a finding.
func (c *Context) Refuse(reason core.Reason, format string, args ...any) {
	c.result.Refused = true
	c.Note(reason, format, args...)
}

// Note reports a finding that changes nothing.
func (c *Context) Note(reason core.Reason, format string, args ...any) {
	c.result.Findings = append(c.result.Findings, core.Finding{Object: c.Object, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// Applied is the outcome of an object's annotations.
type Applied struct {
	Settings core.Settings
	Refused  bool
	Findings []core.Finding
}

// Apply runs the enabled families on the annotations of one object:
// values over MaxValueBytes, not valid UTF-8 or holding control characters (line breaks
// included, except for MultiLine keys and around the entries of List keys) are invalid; keys
// under Prefix that no enabled family owns are UnknownAnnotation, except
// those of a disabled access-control family, which make the object not
// served (a disabled protection is never served open). Families run in name
// order, each seeing only its keys that are present and valid.
func Apply(sel Selection, object core.Origin, annotations map[string]string, objects Objects) *Applied {
	out := &Applied{}
	valid, rejected := map[string]string{}, map[string]bool{}
	byFamily := map[*Family]map[string]string{}
	for _, full := range sortedKeys(annotations) {
		key, ok := strings.CutPrefix(full, Prefix)
		if !ok {
			noteOtherPrefix(&Context{Object: object, result: out}, full)
			continue
		}
		value := annotations[full]
		f := Owner(key)
		ctx := &Context{Object: object, objects: objects, family: f, result: out}
		switch {
		case f == nil:
			ctx.Note(core.UnknownAnnotation, "%s is not an annotation Ramjet knows; it is ignored", core.Quote(full))
		case !sel.Enabled(f.Name) && f.AccessControl:
			ctx.Refuse(core.UnsupportedAccessControl, "%s%s belongs to the access-control family %s, which is disabled (--annotations); the object is not served", Prefix, key, f.Name)
		case !sel.Enabled(f.Name):
			ctx.Note(core.UnknownAnnotation, "%s%s belongs to the family %s, which is disabled (--annotations); it is ignored", Prefix, key, f.Name)
		case f.keyNamed(key).Ignored != "":
			ctx.Note(core.UnknownAnnotation, "%s%s has no counterpart in Ramjet: %s; it is ignored", Prefix, key, f.keyNamed(key).Ignored)
		default:
			if err := validate(f, key, value); err != nil {
				ctx.Invalid(key, "%v", err)
				rejected[key] = true
				continue
			}
			valid[key] = value
			if byFamily[f] == nil {
				byFamily[f] = map[string]string{}
			}
			byFamily[f][key] = value
		}
	}
	// The families with keys, in name order (as Families lists them):
	// most objects have a few, and many none.
	present := slices.SortedFunc(maps.Keys(byFamily), func(a, b *Family) int { return strings.Compare(a.Name, b.Name) })
	for _, f := range present {
		values := byFamily[f]
		ctx := &Context{Object: object, objects: objects, family: f, result: out, valid: valid, rejected: rejected}
		if fragment := f.Parse(ctx, values); fragment != nil {
			fragment(&out.Settings)
		}
	}
	return out
}

// noteOtherPrefix points out an access-control key of ingress-nginx under
// another prefix, which an ingress-nginx installed with --annotations-prefix
// reads: Ramjet reads only Prefix, so the control would silently not apply.
// (The key may also be another controller's, so the object is served.)
func noteOtherPrefix(ctx *Context, full string) {
	i := strings.LastIndexByte(full, '/')
	if i < 0 {
		return
	}
	if f := Owner(full[i+1:]); f != nil && f.AccessControl {
		ctx.Note(core.UnknownAnnotation, "%s looks like ingress-nginx's %s%s under another prefix (--annotations-prefix); Ramjet reads only %s, so it does not apply: rename the key if it is meant for this controller",
			core.Quote(full), Prefix, full[i+1:], Prefix)
	}
}

// validate applies the general rules and the key's validator. Line breaks
// are control characters too, except for MultiLine keys and around the
// entries of List keys.
func validate(f *Family, key, value string) error {
	if len(value) > MaxValueBytes {
		return fmt.Errorf("the value is longer than %d bytes", MaxValueBytes)
	}
	if !utf8.ValidString(value) {
		return fmt.Errorf("the value is not valid UTF-8")
	}
	k := f.keyNamed(key)
	if err := checkControl(k, value); err != nil {
		return err
	}
	if k != nil && k.Validate != nil {
		return k.Validate(value)
	}
	return nil
}

// checkControl refuses control characters other than tabs; line breaks are
// allowed anywhere in a MultiLine key, and around the comma-separated
// entries of a List key.
func checkControl(k *Key, value string) error {
	switch {
	case k != nil && k.MultiLine:
		return noControl(value, "\r\n")
	case k != nil && k.List:
		i := 0
		for entry := range strings.SplitSeq(value, ",") {
			i++
			if err := noControl(entry, "\r\n"); err != nil {
				return err
			}
			if strings.ContainsAny(strings.Trim(entry, " \t\r\n"), "\r\n") {
				return fmt.Errorf("entry %d holds a line break: separate the entries with commas (line breaks may only surround them)", i)
			}
		}
		return nil
	}
	return noControl(value, "")
}

// noControl refuses control characters (DEL included) other than tabs and
// those in allowed.
func noControl(v, allowed string) error {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t' || c == 0x7f) && strings.IndexByte(allowed, c) < 0 {
			return fmt.Errorf("the value holds control characters")
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Refs lists the names of the objects of kind an object's annotations
// refer to, in the object's namespace, whatever their families' state: the
// Secrets (or ConfigMaps) whose data the controller must have to translate
// the object. References to another namespace are left out (they are never
// read).
func Refs(kind ObjectKind, namespace string, annotations map[string]string) []string {
	if kind == NoObject {
		return nil
	}
	var names []string
	for full, value := range annotations {
		key, ok := strings.CutPrefix(full, Prefix)
		if !ok {
			continue
		}
		f := Owner(key)
		if f == nil || f.keyNamed(key).Names != kind {
			continue
		}
		ns, name, found := strings.Cut(strings.TrimSpace(value), "/")
		switch {
		case !found:
			names = append(names, ns)
		case ns == namespace:
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// CheckValue checks a value of a key (without Prefix) as Apply checks an
// annotation's: an error when no family owns the key, when Ramjet ignores
// it, or when the value is invalid.
func CheckValue(key, value string) error {
	f := Owner(key)
	switch {
	case f == nil:
		return fmt.Errorf("%s%s is not an annotation Ramjet knows", Prefix, key)
	case f.keyNamed(key).Ignored != "":
		return fmt.Errorf("%s%s has no counterpart in Ramjet", Prefix, key)
	}
	return validate(f, key, value)
}
