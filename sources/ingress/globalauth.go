package ingress

import (
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/policies/httpsredirect"
)

// globalAuth applies --global-auth-url, ingress-nginx's global-auth-url, to
// an object without an auth-url of its own that does not say
// enable-global-auth: "false". An object whose paths are all under
// /.well-known/acme-challenge/ (an ACME HTTP-01 solver's, as cert-manager
// creates them) is left alone, as ingress-nginx's no-auth-locations leaves
// that path by default.
func (t *translation) globalAuth() {
	s := &t.c.Settings
	global := t.opts.GlobalAuth
	if global == nil || t.c.Refused || s.NoGlobalAuth || s.Policies.ExternalAuth != nil || t.onlyACMEPaths() {
		return
	}
	if s.BasicAuth != nil && s.Policies.Satisfy == config.SatisfyAny {
		t.c.Refused = true
		t.note(core.UnsupportedAccessControl, "satisfy: any with basic authentication and the controller's --global-auth-url is not provided: "+
			"Ramjet lets the source ranges or one authentication suffice; the object is not served (enable-global-auth: \"false\" exempts it from the global authentication)")
		return
	}
	auth := *global
	s.Policies.ExternalAuth = &auth
	s.Protected = true
}

// onlyACMEPaths reports whether the object has paths, all of them under
// the ACME HTTP-01 challenge prefix, and no default backend.
func (t *translation) onlyACMEPaths() bool {
	if t.ing.Spec.DefaultBackend != nil {
		return false
	}
	paths := 0
	for _, rule := range t.ing.Spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		for _, p := range rule.HTTP.Paths {
			if !strings.HasPrefix(p.Path, httpsredirect.ACMEChallengePrefix) {
				return false
			}
			paths++
		}
	}
	return paths > 0
}
