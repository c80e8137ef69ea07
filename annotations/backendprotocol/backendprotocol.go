// Package backendprotocol is the backend-protocol family: how the pools of
// an object's paths talk to their members. HTTP (the default), HTTPS, GRPC
// (HTTP/2 without TLS) and GRPCS (HTTP/2 over TLS), case-insensitive as in
// ingress-nginx. Members reached over TLS have their certificates verified
// as the controller's --backend-tls-verify says (see the proxy-ssl family
// for the CA, the name and proxy-ssl-verify); AUTO_HTTP, FCGI and AJP are
// not supported and leave the backend on HTTP.
package backendprotocol

import (
	"fmt"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

// key is the annotation key of the family, without registry.Prefix.
const key = "backend-protocol"

// schemes maps the supported values (upper case) to the pool scheme; HTTP
// keeps the default scheme, so that writing it changes no pool name.
var schemes = map[string]config.Scheme{
	"HTTP":  "",
	"HTTPS": config.SchemeHTTPS,
	"GRPC":  config.SchemeH2C,
	"GRPCS": config.SchemeH2,
}

// unsupported maps the values ingress-nginx knows and Ramjet does not
// serve to what they are.
var unsupported = map[string]string{
	"AUTO_HTTP": "the client's scheme, HTTP or HTTPS, towards the members",
	"FCGI":      "FastCGI",
	"AJP":       "the Apache JServ Protocol",
}

func init() {
	registry.Register(&registry.Family{
		Name: "backend-protocol",
		Doc:  "The protocol spoken to the members: HTTP, HTTPS, gRPC or gRPC over TLS.",
		Keys: []registry.Key{
			{Name: key, Validate: validate, Risk: registry.RiskLow, Scope: registry.ScopeBackend, Default: "HTTP",
				Doc: "HTTP (HTTP/1.1), HTTPS (HTTP/1.1 over TLS), GRPC (HTTP/2 without TLS, h2c) or GRPCS (HTTP/2 over TLS), case-insensitive. " +
					"Over TLS the member's certificate is verified (the controller's --backend-tls-verify=always, the default; with annotated only under proxy-ssl-verify: \"on\"): " +
					"against the CA of proxy-ssl-secret (else the system's roots), for the name of proxy-ssl-name (else the member's address, which for a pod is its IP). " +
					"Verified against the system's roots, a pod's members get a BackendTLS finding: their self-signed or private-CA certificates fail.",
				Differs: "ingress-nginx does not verify HTTPS or GRPCS members unless proxy-ssl-verify is on, and sends no SNI; " +
					"Ramjet verifies by default, so a member with a self-signed or private-CA certificate needs proxy-ssl-secret (and proxy-ssl-name) or its requests fail with 502 (BackendTLS says so); " +
					"--backend-tls-verify=annotated follows ingress-nginx. " +
					"AUTO_HTTP, FCGI and AJP are not supported: InvalidAnnotation, and the members are reached over HTTP (ingress-nginx falls back to HTTP for invalid values with only a log line)."},
		},
		Parse: parse,
	})
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	scheme := schemes[normal(values[key])]
	if scheme == "" {
		return nil
	}
	return func(s *core.Settings) { s.Pool.Scheme = scheme }
}

// normal is a value as ingress-nginx compares it: trimmed, upper case.
func normal(v string) string { return strings.ToUpper(strings.TrimSpace(v)) }

func validate(v string) error {
	p := normal(v)
	if _, ok := schemes[p]; ok {
		return nil
	}
	if what, ok := unsupported[p]; ok {
		return fmt.Errorf("%s (%s) is not supported: Ramjet speaks only HTTP, HTTPS, GRPC and GRPCS to members, so they are reached over HTTP", core.Quote(v), what)
	}
	return fmt.Errorf("%s is not one of HTTP, HTTPS, GRPC, GRPCS (case-insensitive), so the members are reached over HTTP", core.Quote(v))
}
