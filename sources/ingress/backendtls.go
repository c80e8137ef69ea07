package ingress

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// BackendTLSVerify is --backend-tls-verify: the objects whose members,
// reached over TLS (backend-protocol HTTPS or GRPCS), have their
// certificates verified.
type BackendTLSVerify string

// The values of --backend-tls-verify.
const (
	// VerifyAlways verifies the members of every object, against ca.crt of
	// proxy-ssl-secret or else the system's roots; proxy-ssl-verify: "off"
	// is refused. The default.
	VerifyAlways BackendTLSVerify = "always"
	// VerifyAnnotated follows ingress-nginx: only the members of objects
	// with proxy-ssl-verify: "on" are verified; the others are reached over
	// TLS without verification.
	VerifyAnnotated BackendTLSVerify = "annotated"
)

// ParseBackendTLSVerify checks the value of --backend-tls-verify.
func ParseBackendTLSVerify(s string) (BackendTLSVerify, error) {
	switch v := BackendTLSVerify(s); v {
	case VerifyAlways, VerifyAnnotated:
		return v, nil
	}
	return "", fmt.Errorf("--backend-tls-verify %q: want always or annotated", s)
}

// verifyKey is the annotation that asks for verification.
const verifyKey = registry.Prefix + "proxy-ssl-verify"

// backendTLS applies --backend-tls-verify to the object's pools reached
// over TLS: with annotated, an object without proxy-ssl-verify: "on" is
// not verified (its CA, if any, unused, as in ingress-nginx); with always,
// every object is, and "off" is refused.
func (t *translation) backendTLS() {
	s := &t.c.Settings
	if !s.Pool.Scheme.UsesTLS() {
		return
	}
	asked := s.VerifyMembers
	switch {
	case t.opts.BackendTLSVerify == VerifyAnnotated && (asked == nil || !*asked):
		s.Pool.SkipVerify, s.Pool.CA = true, nil
	case t.opts.BackendTLSVerify != VerifyAnnotated && asked != nil && !*asked:
		t.note(core.InvalidAnnotation, `%s: "off" is refused: this controller verifies the certificates of members reached over TLS (--backend-tls-verify=always); `+
			`put the CA that signs them in the key ca.crt of a Secret named by proxy-ssl-secret, and set proxy-ssl-name when they do not name the member's address; the key is ignored`, verifyKey)
	}
}

// externalAuthTLS applies --backend-tls-verify to an https auth-url: with
// always it is verified against the system's roots, for the URL's host;
// with annotated it is not, as ingress-nginx does not verify it. A self
// subrequest (ramjetd asking itself) is never verified.
func (t *translation) externalAuthTLS() {
	auth := t.c.Settings.Policies.ExternalAuth
	if auth == nil || auth.Self || t.opts.BackendTLSVerify != VerifyAnnotated || !strings.HasPrefix(auth.URL, "https:") {
		return
	}
	skipped := *auth
	skipped.TLS = &config.AuthTLS{InsecureSkipVerify: true}
	t.c.Settings.Policies.ExternalAuth = &skipped
}

// checkBackendTLS reports, once per Service, members that are verified
// against the system's roots (no CA from proxy-ssl-secret): a pod's
// certificate is self-signed or from a private CA, so its requests would
// answer 502. ExternalName Services are left alone: their DNS name may well
// carry a certificate of a public CA.
func (t *translation) checkBackendTLS(svcKey snapshot.Key) {
	p := t.c.Settings.Pool
	if !p.Scheme.UsesTLS() || p.SkipVerify || p.CA != nil || t.tlsReported[svcKey] {
		return
	}
	if svc := t.snap.Services[svcKey]; svc != nil && svc.Spec.Type == corev1.ServiceTypeExternalName {
		return
	}
	if t.tlsReported == nil {
		t.tlsReported = map[snapshot.Key]bool{}
	}
	t.tlsReported[svcKey] = true
	protocol := "HTTPS"
	if p.Scheme == config.SchemeH2 {
		protocol = "GRPCS"
	}
	name := "the member's IP address"
	if p.ServerName != "" {
		name = "the name " + core.Quote(p.ServerName)
	}
	msg := fmt.Sprintf("Service %s: its members are reached over TLS (backend-protocol %s) and verified against the system's roots for %s: "+
		"a self-signed or private-CA certificate, what pods usually have, fails, and their requests answer 502. "+
		"Fix: name a Secret holding the CA in ca.crt with proxy-ssl-secret, and set proxy-ssl-name to a name their certificates carry", svcKey, protocol, name)
	if t.opts.BackendTLSVerify == VerifyAnnotated {
		msg += fmt.Sprintf(` (%s: "on" asks for this verification; ingress-nginx verifies only with such a Secret, and without one ignores the key)`, verifyKey)
	} else {
		msg += ` (or the cluster admin may choose --backend-tls-verify=annotated, which verifies only objects with proxy-ssl-verify: "on", as ingress-nginx does)`
	}
	t.note(core.BackendTLS, "%s", msg)
}
