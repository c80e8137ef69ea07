// Package basicauth is the basic-auth family: auth-type, auth-secret,
// auth-secret-type and auth-realm, as ingress-nginx's basic
// authentication. The Secret (of the object's namespace) becomes an
// htpasswd file checked at translation: a missing Secret or key, or a weak
// or malformed hash line, makes the object not served (fail closed), and
// the finding names the line, never its content.
package basicauth

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/policies/basicauth"
	"github.com/ramjet-dev/ramjet/registry"
)

func init() {
	registry.Register(&registry.Family{
		Name:          "basic-auth",
		Doc:           "HTTP basic authentication from an htpasswd Secret.",
		AccessControl: true,
		Keys: []registry.Key{
			{Name: "auth-type", Validate: registry.Trimmed(validType), Risk: registry.RiskLow, Scope: registry.ScopeIngress,
				Doc: `"basic": the paths ask for a user and password of auth-secret (401 otherwise); the member never sees the Authorization header.`,
				Differs: "digest is not provided: an object asking for it is not served (ingress-nginx serves digest authentication). " +
					"The object's spec.defaultBackend is not served, since requests that reach it would skip the authentication."},
			{Name: "auth-secret", Validate: registry.Trimmed(registry.SecretName), Names: registry.Secret, Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc: "Secret of the object's namespace holding the users (name, or namespace/name of the same namespace).",
				Differs: "Without auth-type: basic the object is not served (ingress-nginx serves it without authentication). " +
					"A missing Secret, one of another namespace or without the key auth, a plain-text, {SHA}, DES-crypt or MD5-crypt hash, or a user listed twice " +
					"makes the object not served, its paths answering 404 (ingress-nginx answers 503, accepts those hashes and takes the first line of a user)."},
			{Name: "auth-secret-type", Validate: registry.Trimmed(registry.OneOf(false, "auth-file", "auth-map")), Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "auth-file",
				Doc:     "auth-file: an htpasswd file in the key auth; auth-map: one key per user, the hash as value.",
				Differs: "An auth-map value holding a line break makes the object not served (ingress-nginx writes it into the file as more lines)."},
			{Name: "auth-realm", Validate: registry.Trimmed(validRealm), Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc:     "Realm shown in the browser's login prompt.",
				Differs: `Any text without " or \ is accepted (ingress-nginx accepts only letters, digits, spaces and -._~/:, and refuses the object otherwise).`},
		},
		Parse: parse,
	})
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	_, hasType := values["auth-type"]
	ref, hasSecret := values["auth-secret"]
	// A key present with an invalid value has refused the object already:
	// nothing more is said about it being missing.
	rejected := ctx.Rejected("auth-type") || ctx.Rejected("auth-secret")
	switch {
	case !hasType && !hasSecret:
		// auth-realm or auth-secret-type alone configure nothing, as in
		// ingress-nginx.
		for _, k := range []string{"auth-realm", "auth-secret-type"} {
			if _, ok := values[k]; ok && !rejected {
				ctx.Note(core.InvalidAnnotation, "%s%s has no effect without %sauth-type: basic and %sauth-secret; it is ignored", registry.Prefix, k, registry.Prefix, registry.Prefix)
			}
		}
		return nil
	case !hasType:
		if !rejected {
			ctx.Refuse(core.InvalidAnnotation, "%sauth-secret is set without %sauth-type: basic; the object is not served rather than served without the authentication it names", registry.Prefix, registry.Prefix)
		}
		return nil
	case !hasSecret:
		if !rejected {
			ctx.Refuse(core.InvalidAnnotation, "%sauth-type: basic needs %sauth-secret; the object is not served", registry.Prefix, registry.Prefix)
		}
		return nil
	}
	name, ok := ctx.Ref(registry.Secret, "auth-secret", strings.TrimSpace(ref))
	if !ok {
		return nil
	}
	htpasswd, problem := htpasswdOf(ctx, name, strings.TrimSpace(values["auth-secret-type"]))
	if problem != "" {
		ctx.Refuse(core.InvalidAnnotation, "%sauth-secret %s: %s; the object is not served", registry.Prefix, core.Quote(name), problem)
		return nil
	}
	realm := strings.TrimSpace(values["auth-realm"])
	return func(s *core.Settings) {
		s.BasicAuth = &core.BasicAuth{Htpasswd: htpasswd, Realm: realm}
		s.Protected = true
	}
}

// htpasswdOf reads the users of the Secret and checks them with the data
// plane's parser; the problem names lines or keys by number and never
// quotes the Secret's content.
func htpasswdOf(ctx *registry.Context, name, secretType string) ([]byte, string) {
	data, ok := ctx.Secret(name)
	if !ok {
		return nil, "the Secret does not exist"
	}
	if secretType != "auth-map" {
		content, ok := data["auth"]
		if !ok {
			return nil, "the Secret has no key auth"
		}
		if _, err := basicauth.Parse("the key auth", content); err != nil {
			return nil, err.Error()
		}
		return content, ""
	}
	users := make([]string, 0, len(data))
	for user := range data {
		users = append(users, user)
	}
	slices.Sort(users)
	var content []byte
	for i, user := range users {
		hash := strings.TrimSpace(string(data[user]))
		if strings.ContainsAny(hash, "\r\n") {
			return nil, fmt.Sprintf("the value of key %d (in sorted order) holds a line break", i+1)
		}
		content = fmt.Appendf(content, "%s:%s\n", user, hash)
	}
	if _, err := basicauth.Parse("the auth-map users (one line per key, in sorted order)", content); err != nil {
		return nil, err.Error()
	}
	return content, ""
}

// validType accepts "basic", as ingress-nginx spells it; digest gets its
// own reason.
func validType(v string) error {
	switch v {
	case "basic":
		return nil
	case "digest":
		return fmt.Errorf(`"digest" authentication is not provided (only basic)`)
	}
	return fmt.Errorf("%s is not basic", core.Quote(v))
}

// trimmed validates a value without the white space around it, which
// ingress-nginx trims too.
func validRealm(v string) error {
	if strings.ContainsAny(v, "\"\\") {
		return fmt.Errorf("%s must not hold \" or \\", core.Quote(v))
	}
	return nil
}
