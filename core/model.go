// Package core is the heart of the controller: the route model that inputs
// (Ingress, Gateway API) contribute to, the ownership engine that merges
// their contributions under the namespace and oldest-wins rules, the
// generated names, the rendering to the data plane's configuration with its
// validation, and the isolation of objects that break it.
//
// Everything here is a pure function of its input: no Kubernetes client, no
// clock, no I/O. Inputs turn their objects into Contributions; Build turns
// contributions into a ramjet.yaml, its files and the findings (Events) of
// every object.
package core

import (
	"bytes"
	"crypto/tls"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// Origin identifies the object a contribution comes from.
type Origin struct {
	Kind      string // "Ingress", "HTTPRoute"
	Namespace string
	Name      string
	UID       string
	Created   time.Time
}

// String is "Kind namespace/name".
func (o Origin) String() string { return o.Kind + " " + o.Namespace + "/" + o.Name }

// Older reports whether a was created before b; equal times are ordered by
// namespace/name ascending (the Gateway API's tie-break), then kind.
func Older(a, b Origin) bool {
	if !a.Created.Equal(b.Created) {
		return a.Created.Before(b.Created)
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.Kind < b.Kind
}

// Contribution is what one object asks to be served.
type Contribution struct {
	Origin Origin
	// Refused marks an object that is not served (an access control
	// Ramjet does not provide, an invalid access value). It still claims
	// its hosts, paths and TLS hosts, which then answer 404, so that
	// refusing it never hands its users to a newer object.
	Refused bool
	// Rules are the hosts and their paths.
	Rules []Rule
	// TLS lists the hosts that should be served over HTTPS and their
	// certificate. Only hosts with a rule in the same contribution count.
	TLS []TLS
	// DefaultBackend is a claim on the catch-all: the backend of requests
	// no rule takes.
	DefaultBackend *Backend
	// Settings apply to every path of the contribution.
	Settings Settings
	// Listeners are data-plane listeners the object adds (a Gateway's),
	// and Scoped the hosts it serves on single listeners with routes in
	// the input's order (a Gateway API route's): see ScopedHost.
	Listeners []Listener
	Scoped    []ScopedHost
	// Findings are the problems found while translating the object.
	Findings []Finding
}

// Rule is one host and its paths. Host "" is the catch-all: requests for
// hosts no other rule names.
type Rule struct {
	Host  string
	Paths []Path
}

// PathType is how a path matches, as Kubernetes defines it.
type PathType string

// The path types.
const (
	PathExact                  PathType = "Exact"
	PathPrefix                 PathType = "Prefix"
	PathImplementationSpecific PathType = "ImplementationSpecific"
)

// Path is one path of a rule and where it goes.
type Path struct {
	Path    string
	Type    PathType
	Backend *Backend
	// Headers and Cookies narrow the path to requests that carry them
	// (canaries).
	Headers []config.HeaderMatch
	Cookies []config.CookieMatch
}

// Backend is a Service port resolved to its members.
type Backend struct {
	Namespace string
	Service   string
	// Port is the Service port as the object names it: a number or a name.
	Port string
	// Members are the ready addresses; empty answers 503.
	Members []config.Member
}

// TLS is a certificate for hosts.
type TLS struct {
	Hosts []string
	// Secret names the Secret, for findings.
	Secret string
	// Cert is the validated certificate; nil when the Secret is missing or
	// unusable, in which case the hosts are served with the default
	// certificate (Problem says why).
	Cert    *Certificate
	Problem string
	// Unlisted marks a rule host that the object's tls section does not
	// list but serves over TLS all the same, as ingress-nginx does: with
	// the certificate of a Secret of the object that covers it (Cert), or
	// else the default certificate. Only its default certificate is
	// reported.
	Unlisted bool
}

// Certificate is a PEM certificate chain and key that loaded with the data
// plane's loader (dataplane/certs).
type Certificate struct {
	CertPEM, KeyPEM []byte
	Parsed          *tls.Certificate
}

// Settings are what annotations (or filters) change for every path of a
// contribution. The zero value serves paths plainly.
type Settings struct {
	// Regex asks for regex paths (use-regex, or a rewrite-target): the
	// paths of this contribution are regexes, and, for the namespace that
	// owns the host, the whole host switches to regex matching.
	Regex bool
	// AppRoot redirects "/" of every host of the contribution.
	AppRoot string
	// Aliases are more names for every host of the contribution
	// (server-alias), lower case, each an exact name or "*.example.com",
	// which, as a wildcard of nginx's server_name, matches names of one or
	// more labels before the rest. They are host-wide: see Host.Aliases.
	Aliases []string
	// WWWRedirect asks for the www. twin of every host of the
	// contribution (www.example.com for example.com, example.com for
	// www.example.com) to redirect to it (from-to-www-redirect). It is
	// host-wide: see Host.WWWFrom.
	WWWRedirect bool
	// SSLPassthrough asks for the TLS connections of the contribution's
	// hosts to be spliced, undecrypted, to the backend of the host's path
	// "/" (ssl-passthrough, once the input has checked the controller
	// serves it). It is host-wide: see Host.Passthrough.
	SSLPassthrough bool
	// SSLRedirect, when set, overrides the HTTPS redirect of TLS hosts;
	// ForceSSLRedirect redirects even without TLS.
	SSLRedirect      *bool
	ForceSSLRedirect bool
	// PreserveTrailingSlash keeps a trailing "/" in the HTTPS redirect's
	// target (preserve-trailing-slash); without it one is removed, as
	// ingress-nginx does. PortInRedirects writes the HTTPS port, 443, in
	// that target (use-port-in-redirects).
	PreserveTrailingSlash, PortInRedirects bool
	// NoAccessLog leaves the contribution's requests out of the access
	// log (enable-access-log: "false").
	NoAccessLog bool
	// Redirect answers every path with a redirect instead of proxying.
	Redirect *config.Redirect
	// Policies are the route policies; BasicAuth below supplies the file.
	Policies config.Policies
	// BasicAuth is the htpasswd content and realm, when basic auth is on.
	BasicAuth *BasicAuth
	// ClientAuth asks the clients of the contribution's hosts for a
	// certificate (auth-tls-*). It is host-wide: see ClientAuth.
	ClientAuth *ClientAuth
	// Pool changes how the paths' pools reach their members.
	Pool PoolSettings
	// VerifyMembers is proxy-ssl-verify as written (true for "on", false
	// for "off"), nil when absent: what the object asks about verifying
	// its members' certificates. The input decides with the controller's
	// --backend-tls-verify, setting Pool.SkipVerify.
	VerifyMembers *bool
	// CustomHeaders are the response headers an object asks for
	// (custom-headers), nil for none. The input checks them against the
	// controller's allow list and moves them into
	// Policies.ResponseHeaders; core never reads them.
	CustomHeaders *CustomHeaders
	// Mirror copies the requests of every path that proxies to a pool to
	// another address (mirror-target), nil for none.
	Mirror *MirrorTarget
	// NoGlobalAuth is enable-global-auth: "false": the controller's
	// --global-auth-url does not apply to the contribution.
	NoGlobalAuth bool
	// Protected is true when the contribution restricts access (basic auth,
	// source ranges): its default backend is then not served, since the
	// catch-all has no access control.
	Protected bool
	// Canary makes the contribution a canary: it serves no paths, hosts or
	// certificates of its own, and each of its paths takes a share of the
	// main route with the same host, path type and path.
	Canary *Canary
	// ErrorPages are the object's custom error pages and default backend
	// (custom-http-errors, default-backend,
	// disable-proxy-intercept-errors); nil for none.
	ErrorPages *ErrorPages
	// LegacyCanaryAffinity is affinity-canary-behavior: legacy on a
	// canary: its pool balances as the canary says instead of taking the
	// main route's session affinity.
	LegacyCanaryAffinity bool
}

// Canary is what a canary object asks of the main routes it joins. The
// main route's policies apply to the canary's requests too; only the
// canary's pool balancing (load-balance, upstream-hash-by, affinity) is
// its own.
type Canary struct {
	// Weight of Total requests go to the canary. Total is at least 100.
	Weight, Total uint32
	// Header names a request header that sends requests to the canary:
	// those whose value equals HeaderValue when it is set, those whose
	// value matches HeaderPattern (RE2, anywhere in the value) when that is
	// set, else those with "always"; "never" then keeps requests on the
	// main route.
	Header, HeaderValue, HeaderPattern string
	// Cookie names a cookie whose value "always" sends requests to the
	// canary and "never" keeps them on the main route.
	Cookie string
}

// ClientAuth is the client certificate authentication an object asks for
// (auth-tls-*). As nginx's ssl_verify_client it applies to a whole host:
// the host takes that of the oldest served object of its owning namespace
// that sets one, and the paths of objects asking for another (or of
// another namespace) are not served.
type ClientAuth struct {
	// CA is the PEM bundle of the issuing authorities (ca.crt); CRL the
	// PEM revocation lists (ca.crl), nil for none. Both loaded with the
	// data plane's loaders.
	CA, CRL []byte
	// Verify is on, optional or optional_no_ca.
	Verify config.VerifyClient
	// Depth is the verify depth, 1..10.
	Depth int
	// PassCertificate sends the certificate to the member.
	PassCertificate bool
	// ErrorPage, when set, is where failed verifications are redirected.
	ErrorPage string
	// SubjectRegex is an RE2 searched for in the subject DN.
	SubjectRegex string
}

// Equal reports whether two client certificate settings are the same;
// nil equals only nil.
func (a *ClientAuth) Equal(b *ClientAuth) bool {
	if a == nil || b == nil {
		return a == b
	}
	return bytes.Equal(a.CA, b.CA) && bytes.Equal(a.CRL, b.CRL) && a.Verify == b.Verify && a.Depth == b.Depth &&
		a.PassCertificate == b.PassCertificate && a.ErrorPage == b.ErrorPage && a.SubjectRegex == b.SubjectRegex
}

// MirrorTarget is where an object's requests are copied: one address,
// reached over HTTP or HTTPS, which gets its own pool.
type MirrorTarget struct {
	// Scheme is http or https.
	Scheme config.Scheme
	// Address is host:port: a DNS name, which ramjetd resolves under the
	// address rule of members, or an IP address that passed it.
	Address string
	// ServerName is the TLS server name and the name the certificate is
	// verified for (https); SkipVerify accepts any certificate.
	ServerName string
	SkipVerify bool
	// Copy is what the copies carry (host, path, request_uri, no_body);
	// rendering sets its pool.
	Copy config.Mirror
}

// CustomHeaders are response headers read from a ConfigMap.
type CustomHeaders struct {
	// ConfigMap is the name of the ConfigMap, in the object's namespace.
	ConfigMap string
	// Headers are set on every answer, sorted by name.
	Headers []config.Header
}

// ErrorPages is what custom-http-errors, default-backend and
// disable-proxy-intercept-errors ask of an object's paths.
type ErrorPages struct {
	// Statuses are the replaced statuses (custom-http-errors), sorted.
	Statuses []int
	// OwnAnswersOnly leaves the members' answers alone
	// (disable-proxy-intercept-errors).
	OwnAnswersOnly bool
	// Service is the default-backend Service of the object's namespace,
	// "" for none; the input resolves it into Backend.
	Service string
	// Backend is Service's first port with its members: the error backend
	// and the paths' fallback. Nil sends the error pages to the
	// controller's default backend (Options.DefaultBackend).
	Backend *Backend
}

// BasicAuth is an htpasswd file's content and the realm.
type BasicAuth struct {
	Htpasswd []byte
	Realm    string
}

// PoolSettings are the pool fields annotations set. Pools of one Service
// port with different settings are different pools.
type PoolSettings struct {
	Scheme     config.Scheme
	ServerName string
	CA         []byte // PEM bundle for verifying members; nil: system roots
	// ClientCert is presented to members that ask for one (proxy-ssl-secret).
	ClientCert *Certificate
	// SkipVerify accepts any certificate of members reached over TLS (the
	// pool's tls.insecure_skip_verify); CA is then nil.
	SkipVerify      bool
	Balance         config.Balance
	Hash            *config.Hash
	ServiceUpstream bool
}

// IsZero reports whether the settings are the defaults.
func (p PoolSettings) IsZero() bool {
	return p.Scheme == "" && p.ServerName == "" && p.CA == nil && p.ClientCert == nil && !p.SkipVerify &&
		p.Balance == "" && p.Hash == nil && !p.ServiceUpstream
}

// Fragment is what one annotation family (or filter) contributes: a change
// to the settings of an object's paths.
type Fragment func(*Settings)
