// Package authtls is the auth-tls family: client certificate
// authentication, as ingress-nginx's auth-tls-* annotations and nginx's
// ssl_verify_client. The CA bundle (ca.crt) and the revocation lists
// (ca.crl) of a Secret of the object's namespace are checked with the data
// plane's loaders and become generated files of the host's client_auth.
// Every invalid value, a missing Secret or key and a bad PEM make the
// object not served (fail closed); findings never quote the Secret's data.
// The setting is host-wide: core decides which object's applies to a host.
package authtls

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/certs"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

// The keys of the family.
const (
	keySecret    = "auth-tls-secret"
	keyVerify    = "auth-tls-verify-client"
	keyDepth     = "auth-tls-verify-depth"
	keyErrorPage = "auth-tls-error-page"
	keyPass      = "auth-tls-pass-certificate-to-upstream"
	keyMatchCN   = "auth-tls-match-cn"
)

// The keys of the Secret.
const (
	secretCA  = "ca.crt"
	secretCRL = "ca.crl"
)

// verifyOff asks for no certificate.
const verifyOff = "off"

// hostWide is said by every key: the setting is the host's.
const hostWide = " Host-wide: only the namespace that owns the host sets it, and the oldest of its objects that does wins; " +
	"an object of another namespace, or a newer one with other auth-tls-* values, has its paths on the host not served (PathConflict), " +
	"where ingress-nginx silently applies the oldest Ingress's setting to them."

func init() {
	registry.Register(&registry.Family{
		Name:          "auth-tls",
		Doc:           "Client certificate authentication: the clients of the host give a certificate issued by a CA of a Secret.",
		AccessControl: true,
		Keys: []registry.Key{
			{Name: keySecret, Names: registry.Secret, Validate: registry.Trimmed(registry.SecretName), Risk: registry.RiskMedium, Scope: registry.ScopeHost,
				Doc: "Secret of the object's namespace (name, or namespace/name of the same namespace): ca.crt is the PEM bundle of the authorities " +
					"that issue client certificates, ca.crl (optional) their revocation lists. The host must be served over HTTPS with a certificate of its own. " +
					"The member receives ssl-client-verify, ssl-client-subject-dn and ssl-client-issuer-dn.",
				Differs: "ingress-nginx needs namespace/name and, with allow-cross-namespace-resources, reads another namespace's Secret; Ramjet also takes a bare name and reads only the object's namespace. " +
					"A missing Secret, one of another namespace, without ca.crt, or with a ca.crt or ca.crl that does not load " +
					"(a CRL must be signed by a CA of ca.crt) makes the object not served, its paths answering 404 (ingress-nginx answers 503 on its paths). " +
					"A host without TLS, or served with the default certificate, is not served for the object (TLSSecret); ingress-nginx asks for certificates only on HTTPS and serves plain HTTP unchecked. " +
					"An issuer without a revocation list is not checked (OpenSSL fails it when ca.crl is given)." + hostWide},
			{Name: keyVerify, Validate: registry.Trimmed(registry.OneOf(false, string(config.VerifyOn), verifyOff, string(config.VerifyOptional), string(config.VerifyOptionalNoCA))),
				Risk: registry.RiskMedium, Scope: registry.ScopeHost, Default: "on",
				Doc: "on: a verified certificate is required (400 otherwise); optional: a request without a certificate is served with ssl-client-verify NONE; " +
					"optional_no_ca: a certificate of an unknown issuer is passed on with ssl-client-verify FAILED; off: no certificate is asked for.",
				Differs: "Another value makes the object not served (older ingress-nginx falls back to on). With off the member gets no ssl-client-* header " +
					"(ingress-nginx sends ssl-client-verify NONE), the other keys but auth-tls-secret are ignored, and auth-tls-match-cn, which could never match, makes the object not served. " +
					"Without auth-tls-secret, on, optional or optional_no_ca make the object not served (ingress-nginx ignores the key). " +
					"A plain-HTTP request, which carries no certificate and which nginx does not check, is answered 400 in mode on unless its route redirects to HTTPS (the default of a TLS host) or serves ACME challenges."},
			{Name: keyDepth, Validate: registry.Int(0, config.MaxVerifyDepth), Risk: registry.RiskLow, Scope: registry.ScopeHost, Default: "1",
				Doc:     "The most intermediate certificates between the client's and an authority of ca.crt, 0 to 10 (0 means 1); a longer chain fails.",
				Differs: "More than 10 makes the object not served (nginx takes any depth). The chain is built from what the client sends and ca.crt only."},
			{Name: keyErrorPage, Validate: registry.Trimmed(validErrorPage), Risk: registry.RiskHigh, Scope: registry.ScopeHost,
				Doc: "An http or https URL: a missing or failed certificate is answered 302 to it instead of 400.",
				Differs: "Only absolute http and https URLs are taken; a path (which nginx serves by an internal redirect) or another value makes the object not served. " +
					"nginx variables are not interpolated."},
			{Name: keyPass, Validate: registry.Bool, Risk: registry.RiskLow, Scope: registry.ScopeHost, Default: "false",
				Doc:     "true: the member also receives the client's certificate in ssl-client-cert (URL-encoded PEM).",
				Differs: "A value that is not a boolean makes the object not served (ingress-nginx falls back to false)."},
			{Name: keyMatchCN, Validate: registry.Trimmed(validMatchCN), Risk: registry.RiskHigh, Scope: registry.ScopeHost,
				Doc: `A regular expression starting with "CN=", searched for (unanchored, case-sensitive) in the client's subject DN as RFC 2253 writes it ("CN=alice,O=Example"); ` +
					`no match, or no certificate, is answered 403.`,
				Differs: "The expression is RE2 (Go's regexp, which ingress-nginx's validator uses too), not nginx's PCRE: lookarounds, backreferences and possessive quantifiers, " +
					"an expression that does not start with CN= or compiles too large make the object not served (ingress-nginx drops a value without CN= and serves the host unchecked)."},
		},
		Parse: parse,
	})
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	ref, hasSecret := values[keySecret]
	verify := strings.TrimSpace(values[keyVerify])
	if verify == "" {
		verify = string(config.VerifyOn)
	}
	if !hasSecret {
		withoutSecret(ctx, values, verify)
		return nil
	}
	ca, crl, ok := secret(ctx, strings.TrimSpace(ref))
	if !ok {
		return nil
	}
	if verify == verifyOff {
		off(ctx, values)
		return nil
	}
	auth := &core.ClientAuth{
		CA:              ca,
		CRL:             crl,
		Verify:          config.VerifyClient(verify),
		Depth:           1,
		PassCertificate: registry.IsTrue(values[keyPass]),
		ErrorPage:       strings.TrimSpace(values[keyErrorPage]),
		SubjectRegex:    strings.TrimSpace(values[keyMatchCN]),
	}
	if v, ok := values[keyDepth]; ok {
		if depth, _ := registry.ParseInt(v, 0, config.MaxVerifyDepth); depth > 0 {
			auth.Depth = depth
		}
	}
	return func(s *core.Settings) {
		s.ClientAuth = auth
		s.Protected = true
	}
}

// withoutSecret reports the keys of an object without auth-tls-secret:
// those that ask for a check refuse it (serving it unchecked would widen
// access), the others configure nothing.
func withoutSecret(ctx *registry.Context, values map[string]string, verify string) {
	if ctx.Rejected(keySecret) {
		return
	}
	_, hasVerify := values[keyVerify]
	_, hasMatch := values[keyMatchCN]
	if hasVerify && verify != verifyOff || hasMatch {
		asking := registry.Present(values, keyDepth, keyErrorPage, keyPass)
		ctx.Refuse(core.InvalidAnnotation, "%s %s for client certificates without %s%s, which names their authorities; the object is not served",
			strings.Join(asking, ", "), verb(asking, "asks", "ask"), registry.Prefix, keySecret)
		return
	}
	keys := registry.Present(values)
	ctx.Note(core.InvalidAnnotation, "%s %s no effect without %s%s; %s ignored", strings.Join(keys, ", "), verb(keys, "has", "have"), registry.Prefix, keySecret, verb(keys, "it is", "they are"))
}

// off reports the keys that verify-client off makes pointless:
// auth-tls-match-cn could never match, the others configure nothing.
func off(ctx *registry.Context, values map[string]string) {
	if _, ok := values[keyMatchCN]; ok {
		ctx.Invalid(keyMatchCN, "cannot match with %s%s: off, which asks for no certificate", registry.Prefix, keyVerify)
		return
	}
	if unused := registry.Present(values, keySecret, keyVerify); len(unused) > 0 {
		ctx.Note(core.InvalidAnnotation, "%s %s no effect with %s%s: off; %s ignored", strings.Join(unused, ", "), verb(unused, "has", "have"), registry.Prefix, keyVerify, verb(unused, "it is", "they are"))
	}
}

// verb is one or many, as keys count.
func verb(keys []string, one, many string) string {
	if len(keys) == 1 {
		return one
	}
	return many
}

// secret reads ca.crt and ca.crl of the Secret ref names and checks them
// with the data plane's loaders. A problem refuses the object with a
// finding that never quotes the Secret's content.
func secret(ctx *registry.Context, ref string) (ca, crl []byte, ok bool) {
	name, ok := ctx.Ref(registry.Secret, keySecret, ref)
	if !ok {
		return nil, nil, false
	}
	invalid := func(format string, args ...any) ([]byte, []byte, bool) {
		ctx.Invalid(keySecret, "Secret %s %s", core.Quote(name), fmt.Sprintf(format, args...))
		return nil, nil, false
	}
	data, ok := ctx.Secret(name)
	if !ok {
		return invalid("does not exist")
	}
	ca, ok = data[secretCA]
	if !ok {
		return invalid("has no key %s (the CA bundle)", secretCA)
	}
	cas, err := certs.ParseCACertificates(secretCA, ca)
	if err != nil {
		return invalid("has a CA bundle that does not load: %v", err)
	}
	crl, ok = data[secretCRL]
	if !ok {
		return ca, nil, true
	}
	if _, err := certs.ParseCRLs(secretCRL, crl, cas); err != nil {
		return invalid("has revocation lists that do not load: %v", err)
	}
	return ca, crl, true
}

// validErrorPage accepts an absolute http or https URL that the data
// plane can send in a Location header.
func validErrorPage(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s is not an absolute http or https URL", core.Quote(v))
	}
	if strings.Contains(v, "$") {
		return fmt.Errorf("%s holds a $: nginx variables are not interpolated", core.Quote(v))
	}
	if err := config.ValidateHeaderValue(v); err != nil {
		return fmt.Errorf("%s cannot be sent as a Location: %w", core.Quote(v), err)
	}
	return nil
}

// validMatchCN accepts what ingress-nginx's validator accepts, "CN="
// followed by a regular expression, as long as the data plane compiles it:
// RE2 within its size bounds.
func validMatchCN(v string) error {
	if !strings.HasPrefix(v, "CN=") {
		return fmt.Errorf(`%s does not start with "CN="`, core.Quote(v))
	}
	if _, err := config.CompileSubjectRegex(v); err != nil {
		return fmt.Errorf("%s is not a regular expression Ramjet can run (RE2: no lookarounds, backreferences or possessive quantifiers): %w", core.Quote(v), err)
	}
	return nil
}
