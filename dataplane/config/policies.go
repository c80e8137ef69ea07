package config

import "time"

// Policies are what a route does before and around its action. ramjetd
// chains them in one fixed order, documented where the chain is built
// (compiler.chain in dataplane/daemon). Every field's zero value turns its
// policy off, except MaxBody, whose nil keeps the server's limit.
type Policies struct {
	// Allow lists the client addresses (CIDRs or single addresses) that may
	// use the route; empty allows everyone. At most 1024 entries.
	Allow []string `yaml:"allow,omitempty" json:"allow,omitempty"`
	// Deny lists the client addresses refused, checked before Allow. At
	// most 1024 entries.
	Deny []string `yaml:"deny,omitempty" json:"deny,omitempty"`
	// CORS answers preflights and adds CORS headers to answers.
	CORS *CORS `yaml:"cors,omitempty" json:"cors,omitempty"`
	// BasicAuth requires a user and password of an htpasswd file.
	BasicAuth *BasicAuth `yaml:"basic_auth,omitempty" json:"basic_auth,omitempty"`
	// Satisfy says how Allow/Deny and the authentication (BasicAuth or
	// ExternalAuth) combine, as nginx's satisfy: SatisfyAll (the zero
	// value "" means the same) needs both to pass; SatisfyAny lets a client
	// through when either does: an address the lists permit needs no
	// credentials, and one they refuse may still authenticate (a basic
	// authentication failure answers 401, as nginx's, not 403). With one of
	// the two alone there is nothing to combine; any with both BasicAuth
	// and ExternalAuth is refused.
	Satisfy string `yaml:"satisfy,omitempty" json:"satisfy,omitempty"`
	// ExternalAuth asks an HTTP service whether each request may pass.
	ExternalAuth *ExternalAuth `yaml:"external_auth,omitempty" json:"external_auth,omitempty"`
	// WAF inspects requests with ModSecurity rules (Coraza).
	WAF *WAF `yaml:"waf,omitempty" json:"waf,omitempty"`
	// MaxBody overrides server.limits.max_request_body_bytes for the route;
	// 0 means no limit.
	MaxBody *ByteSize `yaml:"max_body,omitempty" json:"max_body,omitempty"`
	// Rewrite changes the path or Host sent to the member.
	Rewrite *Rewrite `yaml:"rewrite,omitempty" json:"rewrite,omitempty"`
	// RequestHeaders changes the request headers sent to the member.
	RequestHeaders *HeaderChanges `yaml:"request_headers,omitempty" json:"request_headers,omitempty"`
	// ResponseHeaders changes the response headers sent to the client.
	ResponseHeaders *HeaderChanges `yaml:"response_headers,omitempty" json:"response_headers,omitempty"`
	// Timeouts override the pool's timeouts for this route.
	Timeouts *Timeouts `yaml:"timeouts,omitempty" json:"timeouts,omitempty"`
	// Retry overrides the pool's retries for this route (the Gateway API's
	// HTTPRouteRetry). Nil keeps the pool's.
	Retry *Retry `yaml:"retry,omitempty" json:"retry,omitempty"`
	// Mirrors send a copy of the route's requests to other pools of the
	// tenant (the Gateway API's RequestMirror), as the main pool receives
	// them (rewrites and header changes applied, the same Host). A copy is
	// sent and forgotten: its answer is discarded, and it never delays or
	// fails the request. Requests whose body is streamed (larger than
	// proxy.ReplayBodyLimit, or of unknown length) are not mirrored, nor
	// are copies beyond the process's bound of mirrored requests in
	// flight. Only routes whose action proxies to pools may mirror; at
	// most MaxMirrors.
	Mirrors []Mirror `yaml:"mirrors,omitempty" json:"mirrors,omitempty"`
}

// Retry is a route's retry policy. The retry rule still decides what may
// be sent again (a POST that reached a member never is); this policy says
// after which answers, how often, and how long to wait. Unlike the pool's
// retries, whose tries go to members not tried yet, a request may be tried
// again on a member it already tried once every member has been (a pool of
// one member retries on it).
type Retry struct {
	// Codes are the answer statuses (400..599) tried again. Empty means
	// 502, 503 and 504.
	Codes []int `yaml:"codes,omitempty" json:"codes,omitempty"`
	// Attempts is how many more tries a request may make, 0..MaxRetryAttempts.
	// Nil keeps the pool's retries.
	Attempts *int `yaml:"attempts,omitempty" json:"attempts,omitempty"`
	// Backoff is the wait before each retry; it doubles after each one,
	// up to 10 times Backoff, within timeouts.request. Zero retries at
	// once. At most MaxRouteConnectTimeout.
	Backoff Duration `yaml:"backoff,omitempty" json:"backoff,omitempty"`
}

// MaxRetryAttempts bounds retry.attempts: with the first, eleven tries.
const MaxRetryAttempts = 10

// MaxMirrors bounds the mirrors of one route.
const MaxMirrors = 8

// Mirror is one pool that receives copies of a route's requests.
type Mirror struct {
	// Pool names a pool of the tenant. Each copy goes to one member.
	Pool string `yaml:"pool" json:"pool"`
	// Fraction is the share of requests copied; nil copies every one.
	Fraction *Fraction `yaml:"fraction,omitempty" json:"fraction,omitempty"`
}

// Fraction is Numerator out of Denominator, chosen at random per request.
type Fraction struct {
	// Numerator is 0..Denominator.
	Numerator uint32 `yaml:"numerator" json:"numerator"`
	// Denominator is 1..1000000. Zero means 100: Numerator is then a
	// percentage.
	Denominator uint32 `yaml:"denominator,omitempty" json:"denominator,omitempty"`
}

// Of returns the denominator with its default.
func (f *Fraction) Of() uint32 {
	if f.Denominator == 0 {
		return 100
	}
	return f.Denominator
}

// The values of Policies.Satisfy.
const (
	SatisfyAll = "all"
	SatisfyAny = "any"
)

// The bounds of a route's timeouts.
const (
	MaxRouteConnectTimeout  = 5 * time.Minute
	MaxRouteResponseTimeout = 24 * time.Hour
)

// CORS is the cross-origin policy of a route, with ingress-nginx's
// defaults.
type CORS struct {
	// AllowOrigins are "*", exact origins ("https://app.example.com",
	// port included when not the scheme's default), origins with a
	// wildcard of one label ("https://*.example.com"), or "null". Empty
	// means "*".
	AllowOrigins []string `yaml:"allow_origins,omitempty" json:"allow_origins,omitempty"`
	// AllowMethods defaults to GET, PUT, POST, DELETE, PATCH, OPTIONS.
	AllowMethods []string `yaml:"allow_methods,omitempty" json:"allow_methods,omitempty"`
	// AllowHeaders defaults to ingress-nginx's list (DNT, Keep-Alive,
	// User-Agent, X-Requested-With, If-Modified-Since, Cache-Control,
	// Content-Type, Range, Authorization).
	AllowHeaders []string `yaml:"allow_headers,omitempty" json:"allow_headers,omitempty"`
	// ExposeHeaders is empty by default; "*" is allowed.
	ExposeHeaders []string `yaml:"expose_headers,omitempty" json:"expose_headers,omitempty"`
	// AllowCredentials sends Access-Control-Allow-Credentials: true. False
	// by default (ingress-nginx's default is true); refused with the origins
	// "*" and "null".
	AllowCredentials bool `yaml:"allow_credentials,omitempty" json:"allow_credentials,omitempty"`
	// MaxAge is how long a browser may cache a preflight. Zero means
	// 1728000s (20 days), ingress-nginx's default.
	MaxAge Duration `yaml:"max_age,omitempty" json:"max_age,omitempty"`
	// GatewayAPI applies the Gateway API's HTTPCORSFilter semantics
	// instead of ingress-nginx's: a "*." wildcard in an origin stands for
	// one or more labels; with allow_credentials, the origin "*" echoes
	// the request's Origin, and the methods or headers "*" echo what the
	// preflight asks for (a browser takes "*" literally then); a preflight
	// from an origin that is not allowed is answered with 204 and no CORS
	// headers instead of going to the member.
	GatewayAPI bool `yaml:"gateway_api,omitempty" json:"gateway_api,omitempty"`
}

// BasicAuth requires HTTP basic authentication against an htpasswd file.
type BasicAuth struct {
	// File is an htpasswd file: one "user:hash" line each, hashes bcrypt
	// ($2y$, $2a$, $2b$), SHA-256 crypt ($5$), SHA-512 crypt ($6$) or
	// Apache MD5 ($apr1$).
	File string `yaml:"file" json:"file"`
	// Realm is shown by browsers in the login prompt.
	Realm string `yaml:"realm,omitempty" json:"realm,omitempty"`
}

// Rewrite changes what is sent to the member.
type Rewrite struct {
	// Path replaces the whole path (the query string is kept). $1 to $9
	// are the submatches of the route's regex; without them every match
	// goes to this path.
	Path string `yaml:"path,omitempty" json:"path,omitempty"`
	// Host replaces the Host header (nginx's upstream-vhost).
	Host string `yaml:"host,omitempty" json:"host,omitempty"`
	// PathPrefix, when set, replaces the prefix the route matched and
	// keeps the rest of the path, by whole segments and with the Gateway
	// API's slash rules (see Redirect.PathPrefix); "" strips the prefix.
	// It excludes Path, and only a route whose path match is a prefix may
	// use it.
	PathPrefix *string `yaml:"path_prefix,omitempty" json:"path_prefix,omitempty"`
	// ForwardedPrefix, when set, sends the X-Forwarded-Prefix request
	// header with this value, replacing one the client sent; $1 to $9 are
	// the submatches of the route's regex, as in Path (ingress-nginx's
	// x-forwarded-prefix). It requires Path. Empty sends no such header
	// of its own (one the client sent reaches the member).
	ForwardedPrefix string `yaml:"forwarded_prefix,omitempty" json:"forwarded_prefix,omitempty"`
}

// HeaderChanges are applied in order: remove, then set, then add.
type HeaderChanges struct {
	// Set replaces the header's values.
	Set []Header `yaml:"set,omitempty" json:"set,omitempty"`
	// Add appends a value to the header's values.
	Add []Header `yaml:"add,omitempty" json:"add,omitempty"`
	// Remove deletes the headers named.
	Remove []string `yaml:"remove,omitempty" json:"remove,omitempty"`
}

// Header is one header name and value.
type Header struct {
	// Name is the header's name, matched case-insensitively.
	Name string `yaml:"name" json:"name"`
	// Value is written as it is.
	Value string `yaml:"value" json:"value"`
}

// Timeouts override a pool's timeouts for one route.
type Timeouts struct {
	// Connect bounds a connection attempt; zero keeps the pool's.
	Connect Duration `yaml:"connect,omitempty" json:"connect,omitempty"`
	// Response bounds the wait for the response head, not the body; zero
	// keeps the pool's.
	Response Duration `yaml:"response,omitempty" json:"response,omitempty"`
	// Request bounds the whole forwarding of a request: every try on the
	// members and the answer to its end (the Gateway API's
	// timeouts.request). Past it the answer is 504 while nothing has been
	// sent to the client, and the connection is cut otherwise (an
	// upgraded connection, such as a WebSocket, ends too). Zero sets no
	// bound.
	Request Duration `yaml:"request,omitempty" json:"request,omitempty"`
	// BackendRequest bounds each try on a member, from sending the request
	// to the end of the answer (timeouts.backendRequest); a try past it
	// fails as a timeout (504, tried again on another member where the
	// retry rule allows). At most Request when both are set. Zero sets no
	// bound.
	BackendRequest Duration `yaml:"backend_request,omitempty" json:"backend_request,omitempty"`
}
