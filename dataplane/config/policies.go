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
	// RateLimit limits the requests of each client address and the
	// bandwidth of each answer (nginx's limit_req, limit_conn, limit_rate).
	RateLimit *RateLimit `yaml:"rate_limit,omitempty" json:"rate_limit,omitempty"`
	// GlobalRateLimit limits the requests of each key per window, counted
	// in server.memcached and so shared by every replica.
	GlobalRateLimit *GlobalRateLimit `yaml:"global_rate_limit,omitempty" json:"global_rate_limit,omitempty"`
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
	// ResponseRewrite rewrites the Location, Refresh and Set-Cookie
	// headers of the members' answers (nginx's proxy_redirect,
	// proxy_cookie_domain and proxy_cookie_path).
	ResponseRewrite *ResponseRewrite `yaml:"response_rewrite,omitempty" json:"response_rewrite,omitempty"`
	// Buffering reads request or response bodies whole before passing
	// them on (nginx's proxy_request_buffering and proxy_buffering), and
	// bounds the head of the members' answers.
	Buffering *Buffering `yaml:"buffering,omitempty" json:"buffering,omitempty"`
	// Mirrors send a copy of the route's requests to other pools of the
	// tenant (the Gateway API's RequestMirror), as the main pool receives
	// them (rewrites and header changes applied, the same Host). A copy is
	// sent and forgotten: its answer is discarded, and it never delays or
	// fails the request. Requests whose body is streamed or larger than
	// proxy.ReplayBodyLimit (64 KiB) are not mirrored (unless the mirror
	// sends no body), nor are copies beyond the process's bound of
	// mirrored requests in flight; a copy gets at most 30s. Only routes
	// whose action proxies to pools may mirror; at most MaxMirrors.
	Mirrors []Mirror `yaml:"mirrors,omitempty" json:"mirrors,omitempty"`
	// ErrorPages replaces some answers by an error backend's and serves
	// the route from a fallback pool while its pool has no members. Only
	// routes whose action proxies to pools may have them.
	ErrorPages *ErrorPages `yaml:"error_pages,omitempty" json:"error_pages,omitempty"`
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
	// Failures, when set, lists the failures other than answers that are
	// tried again, as nginx's proxy_next_upstream: with it, Codes lists
	// every status tried again and its empty list means none. Nil tries
	// every failure again (connect errors, timeouts, broken connections,
	// malformed heads) and Codes' default.
	Failures *RetryFailures `yaml:"failures,omitempty" json:"failures,omitempty"`
	// Within bounds the time during which a request may be tried again,
	// counted from the start of its first try (nginx's
	// proxy_next_upstream_timeout): no retry starts later. Zero sets no
	// bound; at most MaxRouteResponseTimeout.
	Within Duration `yaml:"within,omitempty" json:"within,omitempty"`
}

// RetryFailures are the failures, other than answers, after which a
// request is tried again. All false tries none of them again.
type RetryFailures struct {
	// Error: the connection to the member could not be made, or broke
	// before the response head (nginx's error).
	Error bool `yaml:"error,omitempty" json:"error,omitempty"`
	// Timeout: connecting, sending the request or waiting for the
	// response head took too long (nginx's timeout).
	Timeout bool `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	// InvalidHeader: the member's response head was malformed or larger
	// than allowed (nginx's invalid_header).
	InvalidHeader bool `yaml:"invalid_header,omitempty" json:"invalid_header,omitempty"`
}

// ResponseRewrite rewrites headers of the members' answers. In each list
// the first rule that matches applies.
type ResponseRewrite struct {
	// Redirects rewrite the Location header, and the URL of a Refresh
	// header (after "url="), as nginx's proxy_redirect: From is a prefix,
	// compared case-sensitively, replaced by To.
	Redirects []TextRewrite `yaml:"redirects,omitempty" json:"redirects,omitempty"`
	// CookieDomains rewrite the Domain attribute of Set-Cookie headers, as
	// nginx's proxy_cookie_domain: From is the whole domain, compared
	// without case and without a leading dot (which is kept).
	CookieDomains []TextRewrite `yaml:"cookie_domains,omitempty" json:"cookie_domains,omitempty"`
	// CookiePaths rewrite the Path attribute of Set-Cookie headers, as
	// nginx's proxy_cookie_path: From is a prefix, compared
	// case-sensitively, replaced by To.
	CookiePaths []TextRewrite `yaml:"cookie_paths,omitempty" json:"cookie_paths,omitempty"`
}

// TextRewrite replaces From by To in a header value.
type TextRewrite struct {
	// From is matched as its list says; with Regex it is a regular
	// expression (RE2 syntax, case-sensitive unless it starts with (?i))
	// searched in the whole value, which To then replaces whole.
	From string `yaml:"from" json:"from"`
	// To is the replacement, written as it is; with Regex, $1 to $9 are
	// the submatches. It may be empty.
	To string `yaml:"to" json:"to"`
	// Regex makes From a regular expression.
	Regex bool `yaml:"regex,omitempty" json:"regex,omitempty"`
}

// MaxTextRewrites bounds each list of a ResponseRewrite.
const MaxTextRewrites = 16

// Buffering reads bodies whole before passing them on. The memory it holds
// is bounded twice: Bytes per body, and ProcessBufferBytes for all
// the bodies of the process at once; a body beyond either streams (the
// part read first, then the rest as it arrives).
type Buffering struct {
	// Request reads the whole request body before the first try, so that
	// the member sees the request only once it arrived (nginx's
	// proxy_request_buffering on); a body read whole is sent with a
	// Content-Length and may be sent again by the retry rule. False
	// buffers only bodies of at most proxy.ReplayBodyLimit with a
	// Content-Length, and streams the others.
	Request bool `yaml:"request,omitempty" json:"request,omitempty"`
	// Response reads the member's whole answer before sending it to the
	// client, which frees the member early (nginx's proxy_buffering on):
	// the head waits for the body's end, or for Bytes of it. An answer
	// with X-Accel-Buffering: no, a switch of protocols, or a gRPC or
	// event stream streams. False streams every answer.
	Response bool `yaml:"response,omitempty" json:"response,omitempty"`
	// Bytes bounds one buffered body. Zero means DefaultBufferBytes; at
	// most MaxBufferBytes.
	Bytes ByteSize `yaml:"bytes,omitempty" json:"bytes,omitempty"`
	// HeadBytes bounds the head of the members' answers (nginx's
	// proxy_buffer_size): a larger head fails the try as a malformed one
	// (502). Zero keeps upstream.MaxResponseHeaderBytes (1 MiB); at least
	// MinHeadBytes.
	HeadBytes ByteSize `yaml:"head_bytes,omitempty" json:"head_bytes,omitempty"`
}

// The bounds of Buffering. ProcessBufferBytes bounds what the buffered
// bodies of one ramjetd hold at once (proxy.BufferedBytesLimit).
const (
	ProcessBufferBytes = 256 << 20
	DefaultBufferBytes = 1 << 20
	MaxBufferBytes     = 64 << 20
	MinHeadBytes       = 1 << 10
	MaxHeadBytes       = 1 << 20
)

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
	// Host, when set, is the Host header of the copies (host or
	// host:port, as rewrite.host); empty sends the main request's.
	Host string `yaml:"host,omitempty" json:"host,omitempty"`
	// Path, when set, is the path of the copies, with the query the client
	// sent; it starts with "/". Empty sends the main request's path.
	Path string `yaml:"path,omitempty" json:"path,omitempty"`
	// RequestURI sends the copies the path and query as the client sent
	// them, before any rewrite (nginx's $request_uri). Not with Path.
	RequestURI bool `yaml:"request_uri,omitempty" json:"request_uri,omitempty"`
	// NoBody sends the copies without the request's body (nginx's
	// mirror_request_body off); requests whose body is streamed are then
	// copied too.
	NoBody bool `yaml:"no_body,omitempty" json:"no_body,omitempty"`
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
	// Send bounds each write of the request to the member (nginx's
	// proxy_send_timeout): a member that takes no byte of the request
	// for this long while ramjetd is writing fails the try as a timeout (504, tried again where
	// the retry rule allows). Zero sets no bound; at most
	// MaxRouteResponseTimeout.
	Send Duration `yaml:"send,omitempty" json:"send,omitempty"`
}

// RateLimit limits what each client address may ask of a zone's routes, as
// nginx's limit_req (with burst and nodelay), limit_conn and limit_rate do.
// The client is the address ramjetd settled on (the peer's, or the one a
// trusted proxy reports in X-Forwarded-For). The counts of a zone are shared
// by every route naming it, kept in this process only (each replica counts
// on its own), and survive reloads that keep the zone's name, rate and
// server.limits.rate_limit_zone_clients. A refused request gets Status.
type RateLimit struct {
	// Zone names the state the limits count in: routes naming the same zone
	// share their clients' counts and must set the same rps, rpm, bursts and
	// connections. Required with RPS, RPM or Connections; at most 253 bytes,
	// printable.
	Zone string `yaml:"zone,omitempty" json:"zone,omitempty"`
	// RPS is the requests per second each client may make; zero sets no
	// limit. At most MaxRateLimitRate.
	RPS uint32 `yaml:"rps,omitempty" json:"rps,omitempty"`
	// RPSBurst is how many requests a client may make at once above RPS
	// (nginx's burst with nodelay): after an idle while, RPSBurst+1 requests
	// pass at once, then one every 1/RPS seconds. At most MaxRateLimitBurst.
	RPSBurst uint32 `yaml:"rps_burst,omitempty" json:"rps_burst,omitempty"`
	// RPM is the requests per minute each client may make; zero sets no
	// limit. With RPS as well, a request must pass both. At most
	// MaxRateLimitRate.
	RPM uint32 `yaml:"rpm,omitempty" json:"rpm,omitempty"`
	// RPMBurst is RPSBurst's counterpart for RPM.
	RPMBurst uint32 `yaml:"rpm_burst,omitempty" json:"rpm_burst,omitempty"`
	// Connections is how many requests of one client may be in flight at
	// once (each HTTP/2 stream counts, as nginx's limit_conn counts them);
	// zero sets no limit. At most MaxRateLimitConnections.
	Connections uint32 `yaml:"connections,omitempty" json:"connections,omitempty"`
	// Allowlist are the client addresses (CIDRs or single addresses) that
	// RPS, RPM and Connections do not count. At most 1024 entries.
	Allowlist []string `yaml:"allowlist,omitempty" json:"allowlist,omitempty"`
	// Status answers the requests refused by RPS, RPM or Connections,
	// 400..599; zero means 503 (nginx's limit_req_status default).
	Status int `yaml:"status,omitempty" json:"status,omitempty"`
	// Rate bounds the bytes per second of each answer's body (nginx's
	// limit_rate, per request); zero sends at full speed. As nginx, the
	// answer may run one second ahead of the rate.
	Rate ByteSize `yaml:"rate,omitempty" json:"rate,omitempty"`
	// RateAfter is how much of each answer's body is sent at full speed
	// before Rate applies (limit_rate_after); zero applies it from the
	// start.
	RateAfter ByteSize `yaml:"rate_after,omitempty" json:"rate_after,omitempty"`
}

// Bounds of RateLimit.
const (
	MaxRateLimitRate        = 1_000_000
	MaxRateLimitBurst       = 100_000_000
	MaxRateLimitConnections = 1_000_000
	MaxRateLimitZone        = 253
)

// Counts reports whether the policy counts requests (RPS, RPM or
// Connections), which needs a zone.
func (r *RateLimit) Counts() bool { return r.RPS > 0 || r.RPM > 0 || r.Connections > 0 }

// StatusOr503 is Status with its default.
func (r *RateLimit) StatusOr503() int {
	if r.Status == 0 {
		return 503
	}
	return r.Status
}
