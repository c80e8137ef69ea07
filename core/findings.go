package core

import (
	"cmp"
	"slices"
	"unicode/utf8"
)

// Reason is the reason of a finding, as its Event shows it.
type Reason string

// The reasons of findings (the Events of seed 002, plus ClassConflict,
// UnknownPathType, AddressRefused and BackendTLS).
const (
	// PathConflict: another object (served or not), the default backend or
	// a generated name has a prior owner, or the host belongs to another
	// namespace.
	PathConflict Reason = "PathConflict"
	// ServiceNotFound: the Service, its port or its EndpointSlices are
	// missing; the route answers 503.
	ServiceNotFound Reason = "ServiceNotFound"
	// NoEndpoints: the Service has no ready endpoints; the route answers
	// 503.
	NoEndpoints Reason = "NoEndpoints"
	// AddressRefused: an address of the Service (an endpoint, the
	// ClusterIP, an ExternalName's IP address) is one a member may not be
	// (loopback, unspecified, link-local, multicast, broadcast); it is left
	// out, and the route answers 503 when no member is left.
	AddressRefused Reason = "AddressRefused"
	// BackendTLS: members reached over TLS are verified in a way their
	// certificates are unlikely to pass (against the system's roots, for a
	// pod's address): requests to them answer 502 until the object names
	// the CA (proxy-ssl-secret) and the name (proxy-ssl-name).
	BackendTLS Reason = "BackendTLS"
	// UnsupportedAccessControl: a fail-closed annotation is present; the
	// object is not served.
	UnsupportedAccessControl Reason = "UnsupportedAccessControl"
	// InvalidAnnotation: a value is invalid.
	InvalidAnnotation Reason = "InvalidAnnotation"
	// UnknownAnnotation: the key is unknown or has no counterpart.
	UnknownAnnotation Reason = "UnknownAnnotation"
	// SnippetIgnored: a snippet annotation is not interpreted.
	SnippetIgnored Reason = "SnippetIgnored"
	// TLSSecret: the TLS Secret is missing or unusable, the host already has
	// another object's certificate, or belongs to another namespace.
	TLSSecret Reason = "TLSSecret"
	// InvalidConfiguration: the object was left out because it made the
	// configuration invalid, or holds something that cannot be served.
	InvalidConfiguration Reason = "InvalidConfiguration"
	// CanaryWithoutMain: a canary has no main route in its namespace.
	CanaryWithoutMain Reason = "CanaryWithoutMain"
	// ClassConflict: the class annotation and ingressClassName name
	// different controllers; the annotation is ignored.
	ClassConflict Reason = "ClassConflict"
	// UnknownPathType: the path type is not one Kubernetes defines; it is
	// served as ImplementationSpecific.
	UnknownPathType Reason = "UnknownPathType"
)

// Finding is one problem of one object: a warning Event.
type Finding struct {
	Object  Origin
	Reason  Reason
	Message string
	// Scope is the scoped host the finding is about, for a finding that
	// leaves out one host of a scoped contribution on one listener; the
	// zero value (no Listener) for a finding about the whole object or
	// its Ingress-shaped rules. The input that made the scoped host maps
	// it back to what asked for it (a Gateway API route's parentRefs).
	Scope Scope
}

// Scope names the scoped host of one listener.
type Scope struct {
	// Listener is the data-plane listener; Host the hostname ("" is the
	// listener's catch-all).
	Listener, Host string
}

// MaxMessage bounds a finding's message; user values in messages are cut
// too (Quote).
const MaxMessage = 1024

// Quote renders a user value for a message: quoted, cut at 64 bytes, never
// raw, so that a value cannot forge lines or flood an Event.
func Quote(v string) string {
	const limit = 64
	if len(v) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		return quote(v[:cut]) + "…"
	}
	return quote(v)
}

func quote(v string) string {
	b := make([]byte, 0, len(v)+2)
	b = append(b, '"')
	for _, r := range v {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r < 0x20 || r == 0x7f || r == utf8.RuneError:
			b = append(b, '?')
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return string(append(b, '"'))
}

// SortFindings orders findings by object (oldest first), then reason,
// message and scope, and drops exact duplicates.
func SortFindings(fs []Finding) []Finding {
	slices.SortFunc(fs, func(a, b Finding) int {
		if a.Object != b.Object {
			if Older(a.Object, b.Object) {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(a.Reason, b.Reason); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Message, b.Message); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.Scope.Listener, b.Scope.Listener), cmp.Compare(a.Scope.Host, b.Scope.Host))
	})
	return slices.Compact(fs)
}
