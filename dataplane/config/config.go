// Package config holds the typed form of ramjet.yaml, its strict decoder and
// its validation. The data plane loads it, and the controller renders and
// validates the same types, so the two cannot disagree about what is valid.
//
// Every field's zero value has a documented meaning; Defaults fills the ones
// that differ from zero. Validate reports every problem at once, each with the
// path of the field it concerns.
package config

// Config is the whole of ramjet.yaml.
type Config struct {
	// Server holds the listeners, the health and admin endpoints and the
	// limits that protect the process.
	Server Server `yaml:"server" json:"server"`
	// Tenants maps a tenant name to its applications and pools.
	Tenants map[string]*Tenant `yaml:"tenants,omitempty" json:"tenants,omitempty"`
}

// Server is the process-wide part of the configuration.
type Server struct {
	// Listeners maps a listener name (such as "http" or "https") to where it
	// listens. At least one is required.
	Listeners map[string]*Listener `yaml:"listeners" json:"listeners"`
	// Health is the listener of /healthz, /readyz and /metrics.
	Health Health `yaml:"health" json:"health"`
	// Admin is the admin API, served on a unix socket only.
	Admin Admin `yaml:"admin" json:"admin"`
	// Limits bound what one client can make the proxy do.
	Limits Limits `yaml:"limits,omitempty" json:"limits,omitempty"`
	// TrustedProxies lists the CIDRs whose X-Forwarded-* and X-Real-IP
	// headers are believed. Empty trusts nobody.
	TrustedProxies []string `yaml:"trusted_proxies,omitempty" json:"trusted_proxies,omitempty"`
	// AccessLog logs one line per request at info level when true.
	AccessLog bool `yaml:"access_log,omitempty" json:"access_log,omitempty"`
	// ServerTokens, when true, gives every answer "Server: ramjet", without
	// a version (ingress-nginx's server-tokens: "true"). False, the
	// default, sends no Server header at all. The member's Server header
	// is never passed on either way.
	ServerTokens bool `yaml:"server_tokens,omitempty" json:"server_tokens,omitempty"`
	// Memcached is where global rate limits keep their counts; nil serves
	// no route with a global_rate_limit policy.
	Memcached *Memcached `yaml:"memcached,omitempty" json:"memcached,omitempty"`
}

// Listener is one address the proxy accepts requests on.
type Listener struct {
	// Address is host:port, for example ":80" or "127.0.0.1:8080".
	Address string `yaml:"address" json:"address"`
	// TLS, when present, makes the listener serve HTTPS (HTTP/1.1 and HTTP/2
	// chosen by ALPN). Its certificate is the default one, used when no
	// application's certificate matches the name the client asked for.
	TLS *ListenerTLS `yaml:"tls,omitempty" json:"tls,omitempty"`
	// H2C also serves HTTP/2 without TLS to clients that start a
	// connection with its preface (prior knowledge, RFC 9113 §3.3), as
	// gRPC clients over cleartext do. Only for a listener without TLS,
	// where ALPN chooses. The HTTP/1.1 Upgrade to h2c is never taken.
	H2C bool `yaml:"h2c,omitempty" json:"h2c,omitempty"`
}

// ListenerTLS is the TLS setting of a listener. When both files are empty
// ramjetd generates a self-signed ECDSA P-256 default certificate at start
// ("Ramjet Ingress Controller Fake Certificate").
type ListenerTLS struct {
	// CertFile is the PEM certificate chain of the default certificate.
	CertFile string `yaml:"cert_file,omitempty" json:"cert_file,omitempty"`
	// KeyFile is the PEM private key of the default certificate.
	KeyFile string `yaml:"key_file,omitempty" json:"key_file,omitempty"`
}

// Health is the health and metrics listener.
type Health struct {
	// Address is host:port. Empty turns the listener off.
	Address string `yaml:"address,omitempty" json:"address,omitempty"`
}

// Admin is the admin API endpoint.
type Admin struct {
	// Socket is the path of the unix socket (mode 0600). Empty turns the
	// admin API off.
	Socket string `yaml:"socket,omitempty" json:"socket,omitempty"`
	// AllowLoopbackMembers lets the members of members_from: api pools (the
	// ones PUT /v1/upstreams/{pool} sets and the file's seeds) be loopback
	// addresses (127.0.0.0/8, ::1), for a host install whose own agent
	// registers local services. False refuses them like every other
	// address the address rule refuses (CheckMemberIP); the controller
	// never needs it, since its members are pods.
	AllowLoopbackMembers bool `yaml:"allow_loopback_members,omitempty" json:"allow_loopback_members,omitempty"`
}

// Limits are the protections every listener applies.
type Limits struct {
	// MaxHeaderBytes bounds the request line and headers; above it the
	// answer is 431. Zero means 64 KiB.
	MaxHeaderBytes ByteSize `yaml:"max_header_bytes,omitempty" json:"max_header_bytes,omitempty"`
	// ReadHeaderTimeout bounds the time to read a request's headers. Zero
	// means 10s.
	ReadHeaderTimeout Duration `yaml:"read_header_timeout,omitempty" json:"read_header_timeout,omitempty"`
	// IdleTimeout closes a keep-alive connection idle for this long. Zero
	// means 60s.
	IdleTimeout Duration `yaml:"idle_timeout,omitempty" json:"idle_timeout,omitempty"`
	// ReadBodyTimeout bounds the wait for each read of a request body (as
	// nginx's client_body_timeout); over it the answer is 408. Zero means
	// 60s.
	ReadBodyTimeout Duration `yaml:"read_body_timeout,omitempty" json:"read_body_timeout,omitempty"`
	// MaxRequestBodyBytes is the limit on a request body; above it the
	// answer is 413. Zero means 10 MiB.
	MaxRequestBodyBytes ByteSize `yaml:"max_request_body_bytes,omitempty" json:"max_request_body_bytes,omitempty"`
	// MaxRegexInputBytes bounds the bytes one regex reads from a request:
	// the normalised path, when a request reaches its application's regex
	// routes (longer: 414, as nginx answers a request line longer than its
	// large_client_header_buffers), and all the values one header or
	// cookie regex tests (more: 431). With the regexes' program sizes it
	// bounds what one request may cost (RegexWorkBudget). Zero means 8 KiB,
	// the longest request line nginx reads.
	MaxRegexInputBytes ByteSize `yaml:"max_regex_input_bytes,omitempty" json:"max_regex_input_bytes,omitempty"`
	// HTTP2MaxConcurrentStreams bounds the streams of one HTTP/2
	// connection. Zero means 128.
	HTTP2MaxConcurrentStreams uint32 `yaml:"http2_max_concurrent_streams,omitempty" json:"http2_max_concurrent_streams,omitempty"`
	// SendTimeout bounds each write of an answer to the client (nginx's
	// send_timeout): a client that takes nothing for this long has its
	// connection (HTTP/1.x) or stream (HTTP/2) ended, and the member's
	// connection with it. Zero means 60s.
	SendTimeout Duration `yaml:"send_timeout,omitempty" json:"send_timeout,omitempty"`
	// LingeringTime bounds the drain of a request body that ramjetd
	// answered without reading (nginx's lingering_time): after such an
	// answer the connection closes, and what the client still sends is
	// read and dropped for at most this long. Zero means 30s.
	LingeringTime Duration `yaml:"lingering_time,omitempty" json:"lingering_time,omitempty"`
	// LingeringTimeout ends that drain when nothing arrives for this long
	// (nginx's lingering_timeout). Zero means 5s.
	LingeringTimeout Duration `yaml:"lingering_timeout,omitempty" json:"lingering_timeout,omitempty"`
	// RateLimitZoneClients is how many client addresses each rate-limit
	// zone (policies.rate_limit) holds per limit, 1024..16777216, rounded
	// up to a power of two: 8 bytes each, so the default takes 128 KiB per
	// limit of a zone. When a group of 8 is full, a new client takes the
	// place of the one whose count is lowest (the least recently limited);
	// for connections, a new client whose group has every place in use is
	// refused, as nginx does when its zone is full. Zero means 16384.
	RateLimitZoneClients uint32 `yaml:"rate_limit_zone_clients,omitempty" json:"rate_limit_zone_clients,omitempty"`
}

// DefaultRateLimitZoneClients is server.limits.rate_limit_zone_clients'
// default.
const DefaultRateLimitZoneClients = 16384

// Tenant groups applications and the pools their routes use. Pool names are
// unique across all tenants.
type Tenant struct {
	// Applications maps an application name to its domains and routes.
	Applications map[string]*Application `yaml:"applications,omitempty" json:"applications,omitempty"`
	// Pools maps a pool name to its members and how to reach them.
	Pools map[string]*Pool `yaml:"pools,omitempty" json:"pools,omitempty"`
	// DefaultRoute answers requests for this tenant's domains that match no
	// route, unless the application has its own. Nil answers 404.
	DefaultRoute *DefaultRoute `yaml:"default_route,omitempty" json:"default_route,omitempty"`
}

// Application is a set of domains served by one list of routes.
type Application struct {
	// Domains are exact names ("www.example.com"), wildcards of one
	// left-most label ("*.example.com"), wildcards of one or more
	// left-most labels ("**.example.com") or the catch-all "*", which at
	// most one application of the whole configuration may hold. A host is
	// served by its exact name, else its one-label wildcard, else the
	// "**." wildcard of the longest name it ends in, else the catch-all.
	Domains []string `yaml:"domains" json:"domains"`
	// Listeners names the listeners (keys of server.listeners) whose
	// requests the application serves: its domains, routes and default
	// route exist only there, and on TLS listeners its certificate is
	// chosen by SNI only there. Empty serves it on every listener. Two
	// applications may hold the same domain on different listeners.
	Listeners []string `yaml:"listeners,omitempty" json:"listeners,omitempty"`
	// TLS is the certificate served for the domains. Nil serves the
	// listener's default certificate.
	TLS *CertificateFiles `yaml:"tls,omitempty" json:"tls,omitempty"`
	// ClientAuth asks the clients of the domains for a certificate and
	// verifies it (nginx's ssl_verify_client). It requires TLS. Nil asks
	// for none.
	ClientAuth *ClientAuth `yaml:"client_auth,omitempty" json:"client_auth,omitempty"`
	// SNIGroup names the group of names a TLS connection is set up for
	// (a Gateway API listener's). An HTTPS request whose Host is served by
	// an application of one group, on a connection whose server name (SNI)
	// an application of another group serves, is answered 421 Misdirected
	// Request (RFC 9110 §15.5.20): a client that reuses a connection for
	// another name must open one for it. Empty: no group, never 421.
	SNIGroup string `yaml:"sni_group,omitempty" json:"sni_group,omitempty"`
	// HTTPSRedirect answers plain-HTTP requests with a 308 to HTTPS, except
	// on routes under /.well-known/acme-challenge/. A route may override it.
	HTTPSRedirect bool `yaml:"https_redirect,omitempty" json:"https_redirect,omitempty"`
	// Passthrough, when set, splices the TLS connections of the
	// application's domains to a pool without terminating them: on the TLS
	// listeners that serve the application, a connection whose ClientHello
	// names (SNI) a host the application serves, by the routing rules
	// (exact name, then wildcards), is streamed to a member untouched. The
	// routes still serve the plain-HTTP listeners, and the TLS connections
	// without a server name or with a ClientHello that cannot be read.
	// Nil terminates TLS.
	Passthrough *Passthrough `yaml:"passthrough,omitempty" json:"passthrough,omitempty"`
	// HTTPSRedirectTarget shapes the target of the HTTPS redirect of the
	// application's default route and of the routes that set none. Nil is
	// the zero value: https://host/path?query.
	HTTPSRedirectTarget *HTTPSRedirectTarget `yaml:"https_redirect_target,omitempty" json:"https_redirect_target,omitempty"`
	// AppRoot answers a request for exactly "/" of any of the application's
	// domains with a 302 to this path on the same scheme and host, before
	// any route runs (nginx's app-root).
	AppRoot string `yaml:"app_root,omitempty" json:"app_root,omitempty"`
	// Routes are matched by path precedence (exact, longest prefix, then
	// regex in the order given here).
	Routes []*Route `yaml:"routes,omitempty" json:"routes,omitempty"`
	// DefaultRoute answers requests that match no route. Nil falls back to
	// the tenant's default route.
	DefaultRoute *DefaultRoute `yaml:"default_route,omitempty" json:"default_route,omitempty"`
}

// Passthrough is where the TLS connections of an application go undecrypted
// (ingress-nginx's ssl-passthrough).
type Passthrough struct {
	// Pool names the pool of the tenant whose members receive the
	// connections, balanced by its balance (hash balancing hashes the
	// client address) and dialled within its connect_timeout. Its scheme
	// and tls are not used: the bytes are the client's. Required.
	Pool string `yaml:"pool" json:"pool"`
	// IdleTimeout closes a spliced connection over which nothing went
	// either way for this long. Zero means 1h.
	IdleTimeout Duration `yaml:"idle_timeout,omitempty" json:"idle_timeout,omitempty"`
}

// CertificateFiles names a PEM certificate chain and its private key.
type CertificateFiles struct {
	// CertFile is the PEM certificate chain, leaf first.
	CertFile string `yaml:"cert_file" json:"cert_file"`
	// KeyFile is the PEM private key of the leaf.
	KeyFile string `yaml:"key_file" json:"key_file"`
}

// VerifyClient is how a client certificate is asked for and verified.
type VerifyClient string

// The modes of client certificate verification, as nginx's
// ssl_verify_client.
const (
	// VerifyOn requires a certificate issued by the authorities of
	// ca_file: without one, or with one that fails verification, the
	// answer is 400.
	VerifyOn VerifyClient = "on"
	// VerifyOptional asks for a certificate and verifies the one given: a
	// request without one is served, one with a certificate that fails
	// verification is answered 400.
	VerifyOptional VerifyClient = "optional"
	// VerifyOptionalNoCA asks for a certificate and passes it on even when
	// its issuer is unknown (ssl-client-verify says FAILED); a certificate
	// that fails otherwise (expired, revoked) is answered 400.
	VerifyOptionalNoCA VerifyClient = "optional_no_ca"
)

// ClientAuth is the client certificate authentication of an application
// (ingress-nginx's auth-tls-* annotations).
type ClientAuth struct {
	// CAFile is the PEM bundle of the authorities that issue client
	// certificates (ingress-nginx's ca.crt). Required.
	CAFile string `yaml:"ca_file" json:"ca_file"`
	// CRLFile is a PEM file of certificate revocation lists, each signed by
	// an authority of CAFile (ca.crl). Empty checks no revocation.
	CRLFile string `yaml:"crl_file,omitempty" json:"crl_file,omitempty"`
	// Verify is on, optional or optional_no_ca. Empty means on.
	Verify VerifyClient `yaml:"verify,omitempty" json:"verify,omitempty"`
	// VerifyDepth is the most intermediate certificates allowed between
	// the client's certificate and the authority of CAFile, as OpenSSL
	// counts nginx's ssl_verify_depth: 0 is the default, 1; a longer
	// chain fails verification. At most 10.
	VerifyDepth int `yaml:"verify_depth,omitempty" json:"verify_depth,omitempty"`
	// PassCertificate sends the client's certificate to the member in the
	// ssl-client-cert header (URL-encoded PEM).
	PassCertificate bool `yaml:"pass_certificate,omitempty" json:"pass_certificate,omitempty"`
	// ErrorPage, when set, answers a missing or failed certificate with a
	// 302 to this URL instead of 400.
	ErrorPage string `yaml:"error_page,omitempty" json:"error_page,omitempty"`
	// SubjectRegex, when set, is an RE2 expression searched for
	// (unanchored, case-sensitive) in the client certificate's subject DN
	// as RFC 2253 writes it ("CN=client,O=Example"); a request whose
	// subject does not contain a match, or that has no certificate, is
	// answered 403 (ingress-nginx's auth-tls-match-cn).
	SubjectRegex string `yaml:"subject_regex,omitempty" json:"subject_regex,omitempty"`
}

// MaxVerifyDepth bounds client_auth.verify_depth.
const MaxVerifyDepth = 10

// Depth is VerifyDepth with its default.
func (a *ClientAuth) Depth() int {
	if a.VerifyDepth == 0 {
		return 1
	}
	return a.VerifyDepth
}

// Mode is Verify with its default.
func (a *ClientAuth) Mode() VerifyClient {
	if a.Verify == "" {
		return VerifyOn
	}
	return a.Verify
}

// Route is a match, an action and the policies applied before the action.
type Route struct {
	// Name is optional and only used in logs and errors.
	Name string `yaml:"name,omitempty" json:"name,omitempty"`
	// Match selects the requests of this route.
	Match Match `yaml:"match" json:"match"`
	// Action is what the route does with a matched request.
	Action Action `yaml:"action" json:"action"`
	// HTTPSRedirect overrides the application's https_redirect when set.
	HTTPSRedirect *bool `yaml:"https_redirect,omitempty" json:"https_redirect,omitempty"`
	// HTTPSRedirectTarget overrides the application's
	// https_redirect_target when set.
	HTTPSRedirectTarget *HTTPSRedirectTarget `yaml:"https_redirect_target,omitempty" json:"https_redirect_target,omitempty"`
	// NoAccessLog leaves the route's requests out of the access log
	// (ingress-nginx's enable-access-log: "false"); false logs them when
	// server.access_log is on.
	NoAccessLog bool `yaml:"no_access_log,omitempty" json:"no_access_log,omitempty"`
	// Policies run before and around the action.
	Policies *Policies `yaml:"policies,omitempty" json:"policies,omitempty"`
}

// HTTPSRedirectTarget shapes the address the HTTPS redirect sends a client
// to. The zero value is https://host/path?query, the host without a port
// and the path and query as the client sent them.
type HTTPSRedirectTarget struct {
	// TrimTrailingSlash removes one "/" that ends the path and query as the
	// client sent them, as ingress-nginx does unless
	// preserve-trailing-slash is true: http://h/a/ goes to https://h/a, and
	// http://h/ to https://h. False keeps them as sent.
	TrimTrailingSlash bool `yaml:"trim_trailing_slash,omitempty" json:"trim_trailing_slash,omitempty"`
	// Port, when not zero, is written into the target (https://host:443/a,
	// ingress-nginx's use-port-in-redirects); 1..65535. Zero names none.
	Port int `yaml:"port,omitempty" json:"port,omitempty"`
}

// DefaultRoute is a route without a match: the answer for requests no route
// takes.
type DefaultRoute struct {
	// Action is what the default route does.
	Action Action `yaml:"action" json:"action"`
	// Policies run before and around the action.
	Policies *Policies `yaml:"policies,omitempty" json:"policies,omitempty"`
}

// Match selects requests by path and optionally by method, headers,
// cookies and query parameters. Routes of one path with such matchers are
// tried in configured order (the Gateway API's precedence of method, then
// header count, then query count is the order the controller writes).
type Match struct {
	// Path is required.
	Path PathMatch `yaml:"path" json:"path"`
	// Method, when set, is the one request method matched, compared
	// case-sensitively ("GET"). Empty matches every method.
	Method string `yaml:"method,omitempty" json:"method,omitempty"`
	// Headers must all match.
	Headers []HeaderMatch `yaml:"headers,omitempty" json:"headers,omitempty"`
	// Cookies must all match.
	Cookies []CookieMatch `yaml:"cookies,omitempty" json:"cookies,omitempty"`
	// Query must all match.
	Query []QueryMatch `yaml:"query,omitempty" json:"query,omitempty"`
}

// PathMatch holds exactly one of its fields. Paths are matched against the
// normalised request path (percent-decoded, dot-segments resolved, repeated
// slashes merged).
type PathMatch struct {
	// Exact matches one path, case-sensitively.
	Exact string `yaml:"exact,omitempty" json:"exact,omitempty"`
	// Prefix matches whole path segments: "/foo" matches "/foo", "/foo/" and
	// "/foo/bar" but not "/foobar". A trailing slash is ignored.
	Prefix string `yaml:"prefix,omitempty" json:"prefix,omitempty"`
	// Regex is an RE2 expression compiled as (?i)^(?:<regex>): case
	// insensitive and anchored at the start for every alternative.
	Regex string `yaml:"regex,omitempty" json:"regex,omitempty"`
}

// HeaderMatch tests one request header. With neither Exact nor Regex the
// header only has to be present.
type HeaderMatch struct {
	// Name is the header's name, matched case-insensitively.
	Name string `yaml:"name" json:"name"`
	// Exact compares the value case-sensitively.
	Exact string `yaml:"exact,omitempty" json:"exact,omitempty"`
	// Regex must match the whole value (RE2).
	Regex string `yaml:"regex,omitempty" json:"regex,omitempty"`
}

// CookieMatch tests one cookie of the Cookie header. With neither Exact nor
// Regex the cookie only has to be present.
type CookieMatch struct {
	// Name is the cookie's name, matched case-sensitively.
	Name string `yaml:"name" json:"name"`
	// Exact compares the value case-sensitively.
	Exact string `yaml:"exact,omitempty" json:"exact,omitempty"`
	// Regex must match the whole value (RE2).
	Regex string `yaml:"regex,omitempty" json:"regex,omitempty"`
}

// QueryMatch tests one query parameter of the request target. Names are
// compared case-sensitively after percent-decoding ("+" is a space); when
// the parameter appears several times only its first value is tested. With
// neither Exact nor Regex the parameter only has to be present.
type QueryMatch struct {
	// Name is the parameter's name, matched case-sensitively.
	Name string `yaml:"name" json:"name"`
	// Exact compares the decoded value case-sensitively.
	Exact string `yaml:"exact,omitempty" json:"exact,omitempty"`
	// Regex must match the whole decoded value (RE2).
	Regex string `yaml:"regex,omitempty" json:"regex,omitempty"`
}

// Action holds exactly one of its fields.
type Action struct {
	// Pool proxies to one pool of the tenant.
	Pool string `yaml:"pool,omitempty" json:"pool,omitempty"`
	// Pools proxies to one of several pools, chosen at random by weight.
	Pools []WeightedPool `yaml:"pools,omitempty" json:"pools,omitempty"`
	// Sticky, with Pools, sends a request whose affinity cookie was set
	// by one of the pools (hash by: cookie) back to that pool before any
	// weight is drawn, even to a pool of weight 0, as ingress-nginx keeps
	// a client on the canary or the main backend that served it. False
	// draws the weights for every request.
	Sticky bool `yaml:"sticky,omitempty" json:"sticky,omitempty"`
	// Redirect answers with a redirect.
	Redirect *Redirect `yaml:"redirect,omitempty" json:"redirect,omitempty"`
	// Respond answers with a fixed response.
	Respond *Respond `yaml:"respond,omitempty" json:"respond,omitempty"`
}

// WeightedPool is one choice of a weighted action: a pool, or a fixed
// status.
type WeightedPool struct {
	// Pool names a pool of the tenant. Required unless Status is set.
	Pool string `yaml:"pool" json:"pool"`
	// Weight is relative to the other choices; 0 sends nothing.
	Weight uint32 `yaml:"weight" json:"weight"`
	// Status, when set (400..599), makes this choice answer that status
	// instead of proxying to a pool: its share of the requests fails, as
	// the Gateway API asks of a backendRef that cannot be resolved (500).
	// It excludes Pool. Zero proxies to Pool.
	Status int `yaml:"status,omitempty" json:"status,omitempty"`
}

// Redirect answers with a redirect: to URL used literally, or, without URL,
// to the request's own URL with the parts set here changed (the Gateway
// API's RequestRedirect). The query string is kept.
type Redirect struct {
	// URL is the Location of the answer, as written. It excludes every
	// other field but Code.
	URL string `yaml:"url,omitempty" json:"url,omitempty"`
	// Code is 301, 302, 303, 307 or 308. Zero means 301.
	Code int `yaml:"code,omitempty" json:"code,omitempty"`
	// Scheme is "http" or "https". Empty keeps the request's.
	Scheme string `yaml:"scheme,omitempty" json:"scheme,omitempty"`
	// Hostname replaces the request's host (its port is never kept). Empty
	// keeps the host of the request's Host header.
	Hostname string `yaml:"hostname,omitempty" json:"hostname,omitempty"`
	// Port is the port of the Location, 1..65535. Zero derives it: the
	// default port of Scheme when Scheme is set, otherwise the port of
	// the listener the request came in on (the default port of the
	// request's scheme when a trusted proxy's X-Forwarded-Proto changed
	// it). A port that is its scheme's default (80 for http, 443 for
	// https) is left out of the Location.
	Port int `yaml:"port,omitempty" json:"port,omitempty"`
	// Path replaces the whole path. It excludes PathPrefix. Empty (and no
	// PathPrefix) keeps the path as the client sent it.
	Path string `yaml:"path,omitempty" json:"path,omitempty"`
	// PathPrefix, when set, replaces the prefix the route matched, by
	// whole segments and with the Gateway API's slash rules: "/foo/bar"
	// matched by prefix "/foo" becomes "/xyz/bar" with "/xyz" or "/xyz/",
	// and "/bar" with "" or "/". Only a route whose path match is a
	// prefix may use it.
	PathPrefix *string `yaml:"path_prefix,omitempty" json:"path_prefix,omitempty"`
	// TrimTrailingSlash removes one "/" that ends the path and query of
	// the Location (not the path "/" alone), as ingress-nginx's
	// from-to-www-redirect does. Only without URL.
	TrimTrailingSlash bool `yaml:"trim_trailing_slash,omitempty" json:"trim_trailing_slash,omitempty"`
}

// Respond answers with a fixed status and body.
type Respond struct {
	// Status is the status code, 200..599.
	Status int `yaml:"status" json:"status"`
	// ContentType defaults to "text/plain; charset=utf-8".
	ContentType string `yaml:"content_type,omitempty" json:"content_type,omitempty"`
	// Body is at most 64 KiB.
	Body string `yaml:"body,omitempty" json:"body,omitempty"`
}

// Scheme is how a pool talks to its members.
type Scheme string

// The schemes of a pool.
const (
	// SchemeHTTP is HTTP/1.1 over TCP.
	SchemeHTTP Scheme = "http"
	// SchemeHTTPS is HTTP/1.1 over TLS, verified unless the pool's
	// tls.insecure_skip_verify says otherwise.
	SchemeHTTPS Scheme = "https"
	// SchemeH2C is HTTP/2 without TLS (gRPC).
	SchemeH2C Scheme = "h2c"
	// SchemeH2 is HTTP/2 over TLS (gRPC over TLS), verified like https.
	SchemeH2 Scheme = "h2"
)

// UsesTLS reports whether the scheme dials TLS.
func (s Scheme) UsesTLS() bool { return s == SchemeHTTPS || s == SchemeH2 }

// IsHTTP2 reports whether the scheme speaks HTTP/2 to members.
func (s Scheme) IsHTTP2() bool { return s == SchemeH2C || s == SchemeH2 }

// MembersFrom says where a pool's members come from.
type MembersFrom string

// The sources of members.
const (
	// MembersStatic takes the members from this file only.
	MembersStatic MembersFrom = "static"
	// MembersAPI takes them from PUT /v1/upstreams/{pool}; the file's
	// members are only the seed of a pool the running process does not
	// have yet.
	MembersAPI MembersFrom = "api"
)

// Balance is a load-balancing algorithm.
type Balance string

// The balancing algorithms.
const (
	// BalanceRoundRobin rotates through members, in proportion to weights.
	BalanceRoundRobin Balance = "round_robin"
	// BalanceLeastConn picks the member with the fewest requests in flight
	// relative to its weight.
	BalanceLeastConn Balance = "least_conn"
	// BalanceHash picks by consistent hashing of a key (see Hash).
	BalanceHash Balance = "hash"
)

// HashBy names the key of hash balancing.
type HashBy string

// The keys of hash balancing.
const (
	// HashByClientIP hashes the client address.
	HashByClientIP HashBy = "client_ip"
	// HashByHeader hashes the value of a request header.
	HashByHeader HashBy = "header"
	// HashByCookie hashes the value of a cookie, which the proxy sets when
	// the request has none (session affinity).
	HashByCookie HashBy = "cookie"
	// HashByCookieValue hashes the value of a cookie the application owns
	// (CookieName); the proxy never sets it.
	HashByCookieValue HashBy = "cookie_value"
	// HashByRequestURI hashes the request's path and query as received.
	HashByRequestURI HashBy = "request_uri"
)

// Pool is a set of members that serve the same thing.
type Pool struct {
	// Scheme is http, https, h2c or h2. Empty means http.
	Scheme Scheme `yaml:"scheme,omitempty" json:"scheme,omitempty"`
	// TLS configures the verification of members for https and h2.
	TLS *PoolTLS `yaml:"tls,omitempty" json:"tls,omitempty"`
	// MembersFrom is static (default) or api.
	MembersFrom MembersFrom `yaml:"members_from,omitempty" json:"members_from,omitempty"`
	// Members are the members (static) or their seed (api).
	Members []Member `yaml:"members,omitempty" json:"members,omitempty"`
	// Balance is round_robin (default), least_conn or hash.
	Balance Balance `yaml:"balance,omitempty" json:"balance,omitempty"`
	// Hash configures balance: hash.
	Hash *Hash `yaml:"hash,omitempty" json:"hash,omitempty"`
	// Retries is how many more members a failed request may try. Nil means
	// 2 (three tries in all).
	Retries *int `yaml:"retries,omitempty" json:"retries,omitempty"`
	// ConnectTimeout bounds a connection attempt. Zero means 5s.
	ConnectTimeout Duration `yaml:"connect_timeout,omitempty" json:"connect_timeout,omitempty"`
	// ResponseTimeout bounds the wait for the response head, not the body.
	// Zero means 60s.
	ResponseTimeout Duration `yaml:"response_timeout,omitempty" json:"response_timeout,omitempty"`
}

// PoolTLS is how members' certificates are verified. The zero value
// verifies them against the system's roots for the member's host.
type PoolTLS struct {
	// ServerName is the name sent in SNI and verified in the member's
	// certificate. Empty uses the member's host.
	ServerName string `yaml:"server_name,omitempty" json:"server_name,omitempty"`
	// CAFile is a PEM bundle of the authorities trusted for members. Empty
	// uses the system's roots.
	CAFile string `yaml:"ca_file,omitempty" json:"ca_file,omitempty"`
	// InsecureSkipVerify accepts any certificate of the members, as nginx's
	// proxy_ssl_verify off (ingress-nginx's default); the connection is
	// encrypted but the member is not authenticated. It excludes CAFile.
	// False verifies.
	InsecureSkipVerify bool `yaml:"insecure_skip_verify,omitempty" json:"insecure_skip_verify,omitempty"`
	// CertFile is the client certificate (PEM chain, leaf first) presented
	// to members that ask for one; it goes with KeyFile.
	CertFile string `yaml:"cert_file,omitempty" json:"cert_file,omitempty"`
	// KeyFile is the PEM private key of CertFile's leaf.
	KeyFile string `yaml:"key_file,omitempty" json:"key_file,omitempty"`
}

// Member is one backend address. In YAML it is a mapping or just the
// address ("10.0.0.1:8080").
type Member struct {
	// Address is host:port; IPv6 addresses in brackets.
	Address string `yaml:"address" json:"address"`
	// Weight is relative to the other members, 1 to 1000. Zero means 1.
	Weight uint32 `yaml:"weight,omitempty" json:"weight,omitempty"`
}

// Hash configures hash balancing.
type Hash struct {
	// By is client_ip, header, cookie, cookie_value or request_uri.
	By HashBy `yaml:"by" json:"by"`
	// Header names the header hashed with by: header.
	Header string `yaml:"header,omitempty" json:"header,omitempty"`
	// Cookie configures the cookie of by: cookie.
	Cookie *AffinityCookie `yaml:"cookie,omitempty" json:"cookie,omitempty"`
	// CookieName names the cookie hashed with by: cookie_value.
	CookieName string `yaml:"cookie_name,omitempty" json:"cookie_name,omitempty"`
	// SubsetSize, above 0, hashes each key to a subset of that many
	// members (consecutive in the member list, the last subset filled up
	// with the first members) and sends the request to a random member of
	// it, as ingress-nginx's upstream-hash-by-subset. Zero hashes each key
	// to one member. Not with by: cookie.
	SubsetSize int `yaml:"subset_size,omitempty" json:"subset_size,omitempty"`
}

// AffinityMode is how a session cookie keeps a client on a member.
type AffinityMode string

// The affinity modes.
const (
	// AffinityBalanced hashes the cookie's random value onto the ring of
	// members: when members come or go, some clients move, and the load
	// stays spread.
	AffinityBalanced AffinityMode = "balanced"
	// AffinityPersistent names the member in the cookie: a client stays on
	// its member as long as the pool has it, whatever members are added.
	AffinityPersistent AffinityMode = "persistent"
)

// AffinityCookie is the session cookie of cookie hashing.
type AffinityCookie struct {
	// Name defaults to INGRESSCOOKIE.
	Name string `yaml:"name,omitempty" json:"name,omitempty"`
	// Path defaults to "/".
	Path string `yaml:"path,omitempty" json:"path,omitempty"`
	// Domain is left out of the cookie when empty.
	Domain string `yaml:"domain,omitempty" json:"domain,omitempty"`
	// MaxAge makes a persistent cookie; zero makes a session cookie.
	MaxAge Duration `yaml:"max_age,omitempty" json:"max_age,omitempty"`
	// Secure marks the cookie Secure; when false it is still Secure on
	// HTTPS requests.
	Secure bool `yaml:"secure,omitempty" json:"secure,omitempty"`
	// SameSite is Lax, Strict, None or empty.
	SameSite string `yaml:"same_site,omitempty" json:"same_site,omitempty"`
	// Mode is balanced or persistent. Empty means balanced.
	Mode AffinityMode `yaml:"mode,omitempty" json:"mode,omitempty"`
	// ChangeOnFailure, after a failed try, sends the cookie of the member
	// the request was retried on, so that the client's next requests go
	// there. False keeps the client's cookie: its next request tries its
	// member first again.
	ChangeOnFailure bool `yaml:"change_on_failure,omitempty" json:"change_on_failure,omitempty"`
}
