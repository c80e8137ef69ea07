// Package proxyssl is the proxy-ssl family: TLS from ramjetd to the members
// of pools spoken to over TLS (backend-protocol HTTPS or GRPCS).
// proxy-ssl-secret supplies the CA the members' certificates are verified
// against (ca.crt) and a client certificate presented to them (tls.crt,
// tls.key), proxy-ssl-name the name sent by SNI and verified, and
// proxy-ssl-verify what the object asks about verification, which the
// Ingress input weighs with the controller's --backend-tls-verify (always,
// the default, verifies every such pool). A Secret that is missing or does
// not load is ignored with a finding, and the members are then verified
// against the system's roots, which a private CA's certificate fails: the
// pool fails closed, never open.
package proxyssl

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/certs"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

// The keys Parse sees.
const (
	keyName   = "proxy-ssl-name"
	keySecret = "proxy-ssl-secret"
	keyVerify = "proxy-ssl-verify"
)

// The keys of a proxy-ssl-secret Secret, as ingress-nginx reads them.
const (
	secretCA   = "ca.crt"
	secretCert = "tls.crt"
	secretKey  = "tls.key"
)

func init() {
	registry.Register(&registry.Family{
		Name: "proxy-ssl",
		Doc:  "TLS to the members of HTTPS and GRPCS backends: the trusted CA, a client certificate and the verified name.",
		Keys: []registry.Key{
			{Name: keySecret, Names: registry.Secret, Validate: validateSecret, Risk: registry.RiskMedium, Scope: registry.ScopeBackend,
				Doc: "Secret of the object's namespace (name, or namespace/name): ca.crt is the CA bundle the members' certificates are verified against; " +
					"tls.crt and tls.key, when present, are the client certificate presented to members that ask for one. Only with backend-protocol HTTPS or GRPCS.",
				Differs: "ingress-nginx needs namespace/name, ignores the other proxy-ssl-* keys without this one, answers 503 when the Secret is missing, " +
					"and copies the oldest Ingress's setting to the host's other paths; Ramjet also takes a bare name, lets proxy-ssl-name work alone, applies it only to the object's paths, " +
					"and ignores a missing or unusable Secret with InvalidAnnotation (the members are then verified against the system's roots)."},
			{Name: keyName, Validate: validateName, Risk: registry.RiskHigh, Scope: registry.ScopeBackend,
				Doc: "The name verified in the members' certificates (a DNS name, also sent by SNI, or an IP address); " +
					"without it, the member's address, which for a pod is its IP. Only with backend-protocol HTTPS or GRPCS.",
				Differs: "ingress-nginx uses it only together with proxy-ssl-secret and sends it by SNI only with proxy-ssl-server-name: on; " +
					"Ramjet verifies it whenever the members are verified (see proxy-ssl-verify) and always sends it by SNI. nginx variables are not interpolated."},
			{Name: keyVerify, Validate: validateVerify, Risk: registry.RiskLow, Scope: registry.ScopeBackend, Default: "off",
				Doc: `"on" or "off", whether the members' certificates are verified; what counts is the controller's --backend-tls-verify. ` +
					`always (its default) verifies every object's members: "on" changes nothing, "off" is refused (InvalidAnnotation) and they are verified. ` +
					`annotated follows ingress-nginx: only "on" verifies (against ca.crt of proxy-ssl-secret, else the system's roots), "off" and no key do not. Only with backend-protocol HTTPS or GRPCS.`,
				Differs: `ingress-nginx verifies only with "on" and a proxy-ssl-secret holding ca.crt (without the Secret the key is ignored), and without proxy-ssl-name checks the name "upstream_balancer"; ` +
					`Ramjet with --backend-tls-verify=always verifies every object, and with annotated verifies every object that says "on", against the system's roots when no CA is given (a BackendTLS finding says so), for proxy-ssl-name or else the member's address. ` +
					`Values are trimmed and case-insensitive (ingress-nginx treats "On" as invalid, hence "off").`},
			ignored("proxy-ssl-server-name", registry.RiskLow, "off",
				"on sends proxy-ssl-name by SNI to HTTPS members; off, the default, sends no SNI",
				"ramjetd always sends SNI to members reached over TLS: proxy-ssl-name, or else the member's address when it is a DNS name (TLS has no SNI for IP addresses)"),
			ignored("proxy-ssl-verify-depth", registry.RiskLow, "1",
				"the longest certificate chain of a member accepted with proxy-ssl-verify on",
				"ramjetd verifies the members' whole certificate chain up to a trusted CA (ca.crt of proxy-ssl-secret, else the system's roots), with no depth limit"),
			ignored("proxy-ssl-ciphers", registry.RiskMedium, "DEFAULT",
				"the OpenSSL cipher list offered to HTTPS members",
				"ramjetd uses Go's TLS cipher suites towards members, which are not configurable"),
			ignored("proxy-ssl-protocols", registry.RiskLow, "TLSv1.2",
				"the TLS versions offered to HTTPS members",
				"ramjetd offers TLS 1.2 and TLS 1.3 to members (minimum TLS 1.2), which is not configurable"),
		},
		Parse: parse,
	})
}

// ignored is a key without counterpart: what it does in ingress-nginx
// (with its default there), and what ramjetd does instead.
func ignored(name string, risk registry.Risk, def, nginx, instead string) registry.Key {
	return registry.IgnoredKey(name, risk, registry.ScopeBackend, def, nginx+".", instead)
}

// backendProtocol is the object's backend-protocol as ingress-nginx compares
// it (trimmed, upper case), HTTP when the key is absent, invalid or its
// family disabled: proxy-ssl applies only to the TLS protocols.
func backendProtocol(ctx *registry.Context) string {
	v, ok := ctx.Value("backend-protocol")
	if !ok {
		return "HTTP"
	}
	return strings.ToUpper(strings.TrimSpace(v))
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	protocol := backendProtocol(ctx)
	if protocol != "HTTPS" && protocol != "GRPCS" {
		for _, k := range slices.Sorted(maps.Keys(values)) {
			ctx.Invalid(k, "applies only to members reached over TLS (backend-protocol HTTPS or GRPCS), and the backend protocol of this object is %s", protocol)
		}
		return nil
	}
	name := strings.ToLower(strings.TrimSpace(values[keyName]))
	var ca []byte
	var client *core.Certificate
	if ref, ok := values[keySecret]; ok {
		ca, client = secret(ctx, strings.TrimSpace(ref))
	}
	var verify *bool
	if v, ok := values[keyVerify]; ok {
		on := normalVerify(v) == "on"
		verify = &on
	}
	if name == "" && ca == nil && client == nil && verify == nil {
		return nil
	}
	return func(s *core.Settings) {
		s.Pool.ServerName, s.Pool.CA, s.Pool.ClientCert = name, ca, client
		s.VerifyMembers = verify
	}
}

// normalVerify is a proxy-ssl-verify value as Ramjet compares it: trimmed,
// lower case.
func normalVerify(v string) string { return strings.ToLower(strings.TrimSpace(v)) }

// secret reads the CA bundle and the client certificate of the Secret ref
// names, each checked with the data plane's loader. Any problem ignores the
// whole Secret with a finding that never quotes its content.
func secret(ctx *registry.Context, ref string) ([]byte, *core.Certificate) {
	name, ok := ctx.Ref(registry.Secret, keySecret, ref)
	if !ok {
		return nil, nil
	}
	invalid := func(format string, args ...any) {
		ctx.Invalid(keySecret, "Secret %s %s, so the members are verified against the system's roots", core.Quote(name), fmt.Sprintf(format, args...))
	}
	data, ok := ctx.Secret(name)
	if !ok {
		invalid("does not exist")
		return nil, nil
	}
	ca, hasCA := data[secretCA]
	certPEM, hasCert := data[secretCert]
	keyPEM, hasKey := data[secretKey]
	switch {
	case !hasCA && !hasCert:
		invalid("has neither %s (a CA bundle) nor %s and %s (a client certificate)", secretCA, secretCert, secretKey)
		return nil, nil
	case hasCert && !hasKey:
		invalid("has %s but no %s for the client certificate", secretCert, secretKey)
		return nil, nil
	case hasKey && !hasCert:
		invalid("has %s but no %s for the client certificate", secretKey, secretCert)
		return nil, nil
	}
	if hasCA {
		if _, err := certs.LoadCAPool(ca); err != nil {
			invalid("has a %s that does not load: %v", secretCA, err)
			return nil, nil
		}
	}
	if !hasCert {
		return ca, nil
	}
	parsed, err := certs.LoadNamed(secretCert, certPEM, secretKey, keyPEM)
	if err != nil {
		invalid("has a client certificate that does not load: %v", err)
		return nil, nil
	}
	return ca, &core.Certificate{CertPEM: certPEM, KeyPEM: keyPEM, Parsed: parsed}
}

// validateName accepts what the data plane accepts as a pool's
// tls.server_name: an IP address, or one DNS name (no wildcard); letters
// may be of either case (the name is lowered).
func validateName(v string) error {
	name := strings.ToLower(strings.TrimSpace(v))
	switch {
	case strings.Contains(name, "$"):
		return fmt.Errorf("%s holds a $: nginx variables are not interpolated; write the name the members' certificates carry", core.Quote(v))
	case net.ParseIP(name) != nil:
		return nil
	case strings.HasPrefix(name, "*"):
		return fmt.Errorf("%s is a wildcard; write one name: it is the name verified in the members' certificates", core.Quote(v))
	case config.ValidateDomain(name) != nil:
		return fmt.Errorf("%s is not a DNS name (labels of letters, digits and '-', separated by '.') or an IP address", core.Quote(v))
	}
	return nil
}

// validateSecret accepts a Secret name, or namespace/name, with
// surrounding whitespace (trimmed, as ingress-nginx does).
func validateSecret(v string) error {
	if err := registry.SecretName(strings.TrimSpace(v)); err != nil {
		return fmt.Errorf("%s is not a Secret name (name, or namespace/name)", core.Quote(v))
	}
	return nil
}

// validateVerify accepts "on" and "off"; whether "off" is honoured is the
// controller's --backend-tls-verify.
func validateVerify(v string) error {
	switch normalVerify(v) {
	case "on", "off":
		return nil
	}
	return fmt.Errorf(`%s is neither "on" nor "off"`, core.Quote(v))
}
