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
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/policies/basicauth"
	"github.com/ramjet-dev/ramjet/registry"
)

func init() {
	registry.Register(&registry.Family{
		Name:          "basic-auth",
		Doc:           "HTTP basic authentication from an htpasswd Secret.",
		AccessControl: true,
		Keys: []registry.Key{
			{Name: "auth-type", Validate: oneOf("basic"), Risk: registry.RiskLow, Scope: registry.ScopeIngress,
				Doc: `"basic" (digest is not supported: the object is not served).`},
			{Name: "auth-secret", Validate: validSecretRef, Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc: "Secret of the object's namespace holding the users (name, or namespace/name of the same namespace)."},
			{Name: "auth-secret-type", Validate: oneOf("auth-file", "auth-map"), Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "auth-file",
				Doc: "auth-file: an htpasswd file in the key auth; auth-map: one key per user, the hash as value."},
			{Name: "auth-realm", Validate: validRealm, Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc: "Realm shown in the browser's login prompt."},
		},
		Parse: parse,
	})
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	kind, secret := values["auth-type"], values["auth-secret"]
	switch {
	case kind == "":
		ctx.Refuse(core.InvalidAnnotation, "%sauth-secret is set without %sauth-type: basic; the object is not served rather than served without the authentication it names", registry.Prefix, registry.Prefix)
		return nil
	case secret == "":
		ctx.Refuse(core.InvalidAnnotation, "%sauth-type: basic needs %sauth-secret; the object is not served", registry.Prefix, registry.Prefix)
		return nil
	}
	name := secret
	if ns, n, ok := strings.Cut(secret, "/"); ok {
		if ns != ctx.Object.Namespace {
			ctx.Refuse(core.InvalidAnnotation, "%sauth-secret %s is in another namespace; only Secrets of the object's namespace are read; the object is not served", registry.Prefix, core.Quote(secret))
			return nil
		}
		name = n
	}
	htpasswd, problem := htpasswdOf(ctx, name, values["auth-secret-type"])
	if problem != "" {
		ctx.Refuse(core.InvalidAnnotation, "%sauth-secret %s: %s; the object is not served", registry.Prefix, core.Quote(name), problem)
		return nil
	}
	realm := values["auth-realm"]
	return func(s *core.Settings) {
		s.BasicAuth = &core.BasicAuth{Htpasswd: htpasswd, Realm: realm}
		s.Protected = true
	}
}

// htpasswdOf reads the users of the Secret and checks them with the data
// plane's parser; the problem never quotes the Secret's content.
func htpasswdOf(ctx *registry.Context, name, secretType string) ([]byte, string) {
	data, ok := ctx.Secret(name)
	if !ok {
		return nil, "the Secret does not exist"
	}
	var content []byte
	if secretType == "auth-map" {
		users := make([]string, 0, len(data))
		for user := range data {
			users = append(users, user)
		}
		slices.Sort(users)
		for _, user := range users {
			content = fmt.Appendf(content, "%s:%s\n", user, strings.TrimSpace(string(data[user])))
		}
	} else {
		content, ok = data["auth"]
		if !ok {
			return nil, "the Secret has no key auth"
		}
	}
	if _, err := basicauth.Parse("the htpasswd", content); err != nil {
		return nil, err.Error()
	}
	return content, ""
}

func oneOf(allowed ...string) func(string) error {
	return func(v string) error {
		if !slices.Contains(allowed, v) {
			return fmt.Errorf("%s is not one of %s", core.Quote(v), strings.Join(allowed, ", "))
		}
		return nil
	}
}

func validSecretRef(v string) error {
	for _, part := range strings.Split(v, "/") {
		if config.ValidateDomain(part) != nil && config.ValidateName(part) != nil || strings.Count(v, "/") > 1 {
			return fmt.Errorf("%s is not a Secret name (name or namespace/name)", core.Quote(v))
		}
	}
	return nil
}

func validRealm(v string) error {
	if strings.ContainsAny(v, "\"\\") {
		return fmt.Errorf("%s must not hold \" or \\", core.Quote(v))
	}
	return nil
}
