// Package timeouts is the family of ingress-nginx's proxy parser: the
// timeouts towards the members (proxy-connect-timeout, proxy-read-timeout,
// proxy-send-timeout; policies.timeouts), in seconds as ingress-nginx writes
// them or as Go durations ("60s"); retries (proxy-next-upstream, -tries,
// -timeout; policies.retry) within the retry rule; buffering
// (proxy-buffering, proxy-request-buffering, proxy-buffer-size;
// policies.buffering); and the rewriting of the members' Location, Refresh
// and Set-Cookie headers (proxy-redirect-from/-to, proxy-cookie-domain,
// proxy-cookie-path; policies.response_rewrite). The keys ramjetd has no
// counterpart for are ignored with a finding that says what it does
// instead.
package timeouts

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

// The largest timeouts ramjetd's validation accepts on a route: a larger
// value is refused at Apply, on its object, rather than making the whole
// configuration invalid.
const (
	maxConnect  = config.MaxRouteConnectTimeout
	maxResponse = config.MaxRouteResponseTimeout
)

const (
	connectKey      = "proxy-connect-timeout"
	readKey         = "proxy-read-timeout"
	sendKey         = "proxy-send-timeout"
	nextKey         = "proxy-next-upstream"
	triesKey        = "proxy-next-upstream-tries"
	nextTimeoutKey  = "proxy-next-upstream-timeout"
	bufferingKey    = "proxy-buffering"
	requestBufKey   = "proxy-request-buffering"
	bufferSizeKey   = "proxy-buffer-size"
	redirectFromKey = "proxy-redirect-from"
	redirectToKey   = "proxy-redirect-to"
	cookieDomainKey = "proxy-cookie-domain"
	cookiePathKey   = "proxy-cookie-path"
)

// bufferedMiB is what the buffered bodies of the process hold at most.
const bufferedMiB = config.ProcessBufferBytes >> 20

// maxTries is the most tries ramjetd makes of one request.
const maxTries = config.MaxRetryAttempts + 1

func init() {
	registry.Register(&registry.Family{
		Name: "timeouts",
		Doc:  "Timeouts towards the members; the other proxy-* keys of ingress-nginx, which have no counterpart.",
		Keys: append([]registry.Key{
			{Name: connectKey, Validate: upTo(maxConnect, "5m"), Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "5",
				Doc:     `Time to connect to a member (TLS handshake included), in seconds ("5") or like 5s; over it 504, after trying other members. At most 5m; "0" means the default, 5s.`,
				Differs: `Go-style durations ("5s", "1m30s") are accepted besides whole seconds (ingress-nginx ignores anything but an integer); "0" means the default 5s, where ingress-nginx passes 0s on to nginx.`},
			{Name: readKey, Validate: upTo(maxResponse, "24h"), Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "60",
				Doc: `Time to wait for the member's response head once the request is sent, in seconds ("60") or like 60s; over it 504. At most 24h; "0" means the default, 60s.`,
				Differs: "Bounds only the wait for the response head: nginx's proxy_read_timeout also cuts a response whose body stalls between two reads for longer, which ramjetd does not. " +
					`Go-style durations are accepted besides whole seconds; "0" means the default 60s.`},
			{Name: sendKey, Validate: upTo(maxResponse, "24h"), Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "60",
				Doc: `Time allowed between two writes of the request to the member, in seconds ("60") or like 60s: a member that takes no byte of the request for this long fails the try as a timeout (504, tried again where the retry rule allows). At most 24h; "0" sets no bound.`,
				Differs: `Without the key ramjetd sets no send timeout (ingress-nginx's default is 60s): a member that stops reading is bounded by proxy-read-timeout only once the request is sent. ` +
					`Go-style durations are accepted besides whole seconds; "0" sets no bound, where ingress-nginx passes 0s on to nginx.`},
			{Name: nextKey, Validate: nextUpstream, Risk: registry.RiskMedium, Scope: registry.ScopeIngress, Default: "error timeout",
				Doc: "The failures after which a request is passed to another member, separated by spaces: error (no connection, or it broke before the response head), timeout (connecting, sending or waiting for the head), invalid_header (a malformed or too large head), " +
					"http_500, http_502, http_503, http_504, http_403, http_404, http_429 (those answers), non_idempotent, or off (no retries). " +
					"An answer tried again on the last try is passed to the client. What may be sent again stays within the retry rule: a request is never sent again once anything was sent to the client, " +
					"nor a non-idempotent one (POST, PATCH, ...) once it reached a member, nor one whose body was streamed.",
				Differs: "non_idempotent changes nothing: ramjetd never sends a POST, PATCH or other non-idempotent request again after it reached a member (it is tried again only after a failed connect, as without the keyword); ConfigMap retry-non-idempotent has no counterpart either. " +
					"Without any proxy-next-upstream* key, ramjetd also tries 502, 503 and 504 answers again (ingress-nginx's default, error timeout, passes them on); with one of them, exactly the listed conditions apply (error timeout when this key is absent). " +
					"Once every member was tried, a try may go to one already tried (ingress-nginx's balancer may pick the same member too)."},
			{Name: triesKey, Validate: registry.Int(0, 1<<20), Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "3",
				Doc:     "How many tries a request may take in all, the first included; 0 means no limit.",
				Differs: fmt.Sprintf("ramjetd makes at most %d tries of a request: 0 (no limit) and larger numbers mean %d.", maxTries, maxTries)},
			{Name: nextTimeoutKey, Validate: upTo(maxResponse, "24h"), Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "0",
				Doc:     `Time, from the start of the first try, after which no further try starts, in seconds ("10") or like 10s; "0" means no limit. A try under way is not cut (its timeouts bound it).`,
				Differs: `Go-style durations are accepted besides whole seconds. A try that started before the limit runs with its own connect timeout, where nginx shortens it to what is left of the limit.`},
			{Name: bufferingKey, Validate: onOff, Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "off",
				Doc: fmt.Sprintf(`"on" reads the member's whole answer before sending it to the client, so that the member is freed early, up to %d MiB per answer (the rest then streams); an answer with X-Accel-Buffering: no, a gRPC or event stream, or a switch of protocols streams. "off" streams answers as they arrive.`, config.DefaultBufferBytes>>20),
				Differs: fmt.Sprintf(`Buffers only in memory, at most %d MiB per answer and %d MiB for the whole process; beyond them the answer streams (nginx writes what its buffers cannot hold to a temporary file, up to proxy-max-temp-file-size). `+
					`The head is sent to the client once the body ended or the bound was reached, where nginx sends it at once.`, config.DefaultBufferBytes>>20, bufferedMiB)},
			{Name: requestBufKey, Validate: onOff, Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "on",
				Doc: fmt.Sprintf(`"on" reads the whole request body, up to %d MiB, before the first try: the member sees the request only once the body arrived, with a Content-Length (a chunked body too), and the request can be tried again. "off" streams bodies larger than 64 KiB or of unknown length to the member as they arrive.`, config.DefaultBufferBytes>>20),
				Differs: fmt.Sprintf(`Without the key ramjetd streams bodies larger than 64 KiB or of unknown length (as "off"), where ingress-nginx's default is on. With "on", a body larger than %d MiB, or beyond the %d MiB the whole process buffers, is sent as what was read and then the rest as it arrives (nginx writes the body to a temporary file and sends it whole).`,
					config.DefaultBufferBytes>>20, bufferedMiB)},
			{Name: bufferSizeKey, Validate: headSize, Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "4k",
				Doc:     "The largest response head a member may send (status line and headers), like 8k: a larger one fails the try as invalid_header (502). 1k to 1m.",
				Differs: "Without the key a member's head may be up to 1 MiB, where ingress-nginx's default, 4k, answers 502 to larger ones. It bounds only the head: ramjetd's copy buffers do not depend on it."},
			{Name: redirectFromKey, Validate: rewriteWord(true), Risk: registry.RiskMedium, Scope: registry.ScopeIngress, Default: "off",
				Doc: "With proxy-redirect-to, the start of the Location header of the members' answers (and of the URL of a Refresh header) that proxy-redirect-to replaces, compared case-sensitively, like http://members.internal/. " +
					`"~regex" or "~*regex" (case-insensitive) is a regular expression searched in the value, which proxy-redirect-to then replaces whole ($1 to $9 are its submatches). "off" and "default" rewrite nothing.`,
				Differs: `"default" rewrites nothing: nginx's default replaces the URL of proxy_pass, which in ingress-nginx names its internal upstream and is never seen in an answer. Regular expressions are RE2's syntax, not PCRE's.`},
			{Name: redirectToKey, Validate: rewriteWord(false), Risk: registry.RiskMedium, Scope: registry.ScopeIngress, Default: "off",
				Doc:     `The replacement of proxy-redirect-from, like https://app.example.com/ or /; "off" rewrites nothing.`,
				Differs: "nginx variables ($host, $scheme, ...) are not provided: a value with $ other than $1 to $9 of a regular expression is refused with a finding."},
			{Name: cookieDomainKey, Validate: cookieRule, Risk: registry.RiskMedium, Scope: registry.ScopeIngress, Default: "off",
				Doc: `"FROM TO": the Domain attribute of the members' Set-Cookie headers that equals FROM (without case, a leading dot ignored and kept) becomes TO, like "localhost example.org". ` +
					`A FROM of "~regex" is a regular expression searched in the domain, which TO then replaces whole. "off" rewrites nothing.`,
				Differs: "Regular expressions are RE2's syntax, not PCRE's; nginx variables in TO are not provided."},
			{Name: cookiePathKey, Validate: cookieRule, Risk: registry.RiskMedium, Scope: registry.ScopeIngress, Default: "off",
				Doc: `"FROM TO": the Path attribute of the members' Set-Cookie headers that starts with FROM (case-sensitively) has that start replaced by TO, like "/two/ /". ` +
					`A FROM of "~regex" ("~*" without case) is a regular expression searched in the path, which TO then replaces whole ($1 to $9 are its submatches). "off" rewrites nothing.`,
				Differs: "Regular expressions are RE2's syntax, not PCRE's; nginx variables in TO are not provided."},
		}, ignored...),
		Parse: parse,
	})
}

// ignored are the keys of ingress-nginx's proxy parser ramjetd has no
// counterpart for.
var ignored = []registry.Key{
	ignore("proxy-buffers-number", registry.RiskLow, "4",
		"the number of buffers for a buffered response",
		"ramjetd has no buffers to count: a buffered answer (proxy-buffering: on) is held in memory up to 1 MiB"),
	ignore("proxy-busy-buffers-size", registry.RiskLow, "",
		"how much of a buffered response may be busy being sent to the client",
		"ramjetd has no buffers to size: a buffered answer (proxy-buffering: on) is held in memory up to 1 MiB"),
	ignore("proxy-max-temp-file-size", registry.RiskLow, "1024m",
		"how much of a buffered response may be written to a temporary file",
		"ramjetd never writes answers to temporary files: a buffered answer beyond 1 MiB streams to the client"),
	ignore("proxy-http-version", registry.RiskLow, "1.1",
		"the HTTP version spoken to members, 1.0 or 1.1",
		"ramjetd speaks HTTP/1.1 with keep-alive to members (HTTP/2 with backend-protocol GRPC or GRPCS); HTTP/1.0 cannot be chosen"),
}

// ignore declares a key ramjetd has no counterpart for: def and doc are
// ingress-nginx's default and what the key does there, instead what
// happens in Ramjet.
func ignore(name string, risk registry.Risk, def, doc, instead string) registry.Key {
	return registry.IgnoredKey(name, risk, registry.ScopeIngress, def, doc+".", instead)
}

func parse(c *registry.Context, values map[string]string) core.Fragment {
	connect, response, send := duration(values, connectKey), duration(values, readKey), duration(values, sendKey)
	retry := retryOf(values)
	rewrite := rewriteOf(c, values)
	buffering := bufferingOf(values)
	if connect == 0 && response == 0 && send == 0 && retry == nil && rewrite == nil && buffering == nil {
		return nil // absent, "0" or "off": the pool's defaults
	}
	return func(s *core.Settings) {
		if connect > 0 || response > 0 || send > 0 {
			if s.Policies.Timeouts == nil {
				s.Policies.Timeouts = &config.Timeouts{}
			}
			t := s.Policies.Timeouts
			if connect > 0 {
				t.Connect = connect
			}
			if response > 0 {
				t.Response = response
			}
			if send > 0 {
				t.Send = send
			}
		}
		if retry != nil {
			s.Policies.Retry = retry
		}
		if rewrite != nil {
			s.Policies.ResponseRewrite = rewrite
		}
		if buffering != nil {
			s.Policies.Buffering = buffering
		}
	}
}

// retryOf is the retry policy of proxy-next-upstream, -tries and -timeout;
// nil when none is present. A missing one has ingress-nginx's default.
func retryOf(values map[string]string) *config.Retry {
	next, hasNext := values[nextKey]
	tries, hasTries := values[triesKey]
	_, hasTimeout := values[nextTimeoutKey]
	if !hasNext && !hasTries && !hasTimeout {
		return nil
	}
	if !hasNext {
		next = "error timeout"
	}
	n := 3
	if hasTries {
		n, _ = registry.ParseInt(tries, 0, 1<<20)
	}
	if n == 0 || n > maxTries {
		n = maxTries
	}
	r := &config.Retry{Failures: &config.RetryFailures{}, Within: duration(values, nextTimeoutKey)}
	off := false
	for _, word := range strings.Fields(next) {
		switch word {
		case "error":
			r.Failures.Error = true
		case "timeout":
			r.Failures.Timeout = true
		case "invalid_header":
			r.Failures.InvalidHeader = true
		case "off":
			off = true
		case "non_idempotent":
			// Within the retry rule it changes nothing (see Differs).
		default:
			var code int
			fmt.Sscanf(word, "http_%d", &code)
			if !slices.Contains(r.Codes, code) {
				r.Codes = append(r.Codes, code)
			}
		}
	}
	slices.Sort(r.Codes)
	if off {
		n = 1
		r.Failures, r.Codes = &config.RetryFailures{}, nil
	}
	attempts := n - 1
	r.Attempts = &attempts
	return r
}

// nextWords are the conditions of proxy-next-upstream.
var nextWords = []string{"error", "timeout", "invalid_header", "http_500", "http_502", "http_503", "http_504", "http_403", "http_404", "http_429", "non_idempotent", "off"}

// nextUpstream validates proxy-next-upstream.
func nextUpstream(v string) error {
	words := strings.Fields(v)
	if len(words) == 0 {
		return fmt.Errorf("%s lists no condition (%s)", core.Quote(v), strings.Join(nextWords, ", "))
	}
	for _, w := range words {
		if !slices.Contains(nextWords, w) {
			return fmt.Errorf("%s is not one of %s", core.Quote(w), strings.Join(nextWords, ", "))
		}
	}
	return nil
}

// bufferingOf is the buffering policy of proxy-buffering,
// proxy-request-buffering and proxy-buffer-size; nil when they change
// nothing.
func bufferingOf(values map[string]string) *config.Buffering {
	b := &config.Buffering{
		Response: isOn(values, bufferingKey),
		Request:  isOn(values, requestBufKey),
	}
	if v, ok := values[bufferSizeKey]; ok {
		n, _ := registry.ParseSize(v)
		b.HeadBytes = config.ByteSize(n)
	}
	if *b == (config.Buffering{}) {
		return nil
	}
	return b
}

func isOn(values map[string]string, key string) bool {
	return strings.EqualFold(strings.TrimSpace(values[key]), "on")
}

// onOff validates on or off.
func onOff(v string) error { return registry.OneOf(true, "on", "off")(strings.TrimSpace(v)) }

// headSize validates proxy-buffer-size.
func headSize(v string) error {
	n, err := registry.ParseSize(v)
	if err != nil {
		return err
	}
	if n < config.MinHeadBytes || n > config.MaxHeadBytes {
		return fmt.Errorf("%s is out of the range ramjetd allows (1k to 1m)", core.Quote(v))
	}
	return nil
}

// rewriteOf is the response rewrite of proxy-redirect-* and
// proxy-cookie-*; nil when they rewrite nothing.
func rewriteOf(c *registry.Context, values map[string]string) *config.ResponseRewrite {
	rw := &config.ResponseRewrite{}
	from, hasFrom := values[redirectFromKey]
	to, hasTo := values[redirectToKey]
	from, to = strings.TrimSpace(from), strings.TrimSpace(to)
	switch {
	case !hasFrom || from == "off" || from == "default":
		if hasTo && to != "off" && c != nil {
			c.Invalid(redirectToKey, "has no effect without %s%s (a prefix or ~regex to replace)", registry.Prefix, redirectFromKey)
		}
	case !hasTo || to == "off":
	default:
		t := textRewrite(from, to)
		if err := checkRefs(t); err != nil {
			if c != nil {
				c.Invalid(redirectToKey, "%v, so proxy-redirect-from is ignored too", err)
			}
			break
		}
		rw.Redirects = []config.TextRewrite{t}
	}
	for _, k := range []struct {
		key  string
		list *[]config.TextRewrite
	}{{cookieDomainKey, &rw.CookieDomains}, {cookiePathKey, &rw.CookiePaths}} {
		v, ok := values[k.key]
		if !ok || strings.TrimSpace(v) == "off" {
			continue
		}
		words := strings.Fields(v)
		*k.list = []config.TextRewrite{textRewrite(words[0], words[1])}
	}
	if rw.Redirects == nil && rw.CookieDomains == nil && rw.CookiePaths == nil {
		return nil
	}
	return rw
}

// textRewrite reads nginx's FROM TO: ~regex and ~*regex are regular
// expressions (the second without case).
func textRewrite(from, to string) config.TextRewrite {
	switch {
	case strings.HasPrefix(from, "~*"):
		return config.TextRewrite{From: "(?i)" + from[2:], To: to, Regex: true}
	case strings.HasPrefix(from, "~"):
		return config.TextRewrite{From: from[1:], To: to, Regex: true}
	}
	return config.TextRewrite{From: from, To: to}
}

// rewriteWord returns the validator of proxy-redirect-from (from) or
// -to: one word; a from may be a regular expression.
func rewriteWord(from bool) func(string) error {
	return func(v string) error {
		v = strings.TrimSpace(v)
		if v == "" || strings.ContainsAny(v, " \t") {
			return fmt.Errorf("%s must be one word: a URL or its start, or off", core.Quote(v))
		}
		if from {
			return checkFrom(v)
		}
		return checkTo(v)
	}
}

// cookieRule validates proxy-cookie-domain and -path: off, or FROM TO.
func cookieRule(v string) error {
	words := strings.Fields(v)
	if len(words) == 1 && words[0] == "off" {
		return nil
	}
	if len(words) != 2 {
		return fmt.Errorf("%s must be off or two words, FROM and TO", core.Quote(v))
	}
	if err := checkFrom(words[0]); err != nil {
		return err
	}
	if err := checkTo(words[1]); err != nil {
		return err
	}
	t := textRewrite(words[0], words[1])
	return checkRefs(t)
}

// checkFrom compiles a regular expression FROM.
func checkFrom(v string) error {
	t := textRewrite(v, "")
	if !t.Regex {
		return nil
	}
	if _, err := config.CompileRewriteRegex(t.From); err != nil {
		return fmt.Errorf("%s is not a regular expression: %v", core.Quote(v), err)
	}
	return nil
}

// checkTo refuses nginx variables: a $ must be $1 to $9.
func checkTo(v string) error {
	for i := 0; i < len(v); i++ {
		if v[i] == '$' && (i+1 == len(v) || v[i+1] < '1' || v[i+1] > '9') {
			return fmt.Errorf("%s holds an nginx variable, which ramjetd does not provide (only $1 to $9 of a regular expression)", core.Quote(v))
		}
	}
	return nil
}

// checkRefs refuses $N beyond the submatches of a regex, and any $N
// without one.
func checkRefs(t config.TextRewrite) error {
	groups := 0
	if t.Regex {
		re, _ := config.CompileRewriteRegex(t.From)
		groups = re.NumSubexp()
	}
	for i := 0; i+1 < len(t.To); i++ {
		if t.To[i] == '$' && int(t.To[i+1]-'0') > groups {
			return fmt.Errorf("%s refers to $%c, but %s has %d submatches", core.Quote(t.To), t.To[i+1], core.Quote(t.From), groups)
		}
	}
	return nil
}

// duration reads a validated duration; zero when absent.
func duration(values map[string]string, key string) config.Duration {
	v, ok := values[key]
	if !ok {
		return 0
	}
	d, _ := registry.ParseDuration(v)
	return config.Duration(d)
}

// upTo returns a validator of durations up to limit (written as shown).
func upTo(limit time.Duration, shown string) func(string) error {
	return func(v string) error {
		d, err := registry.ParseDuration(v)
		if err != nil {
			return err
		}
		if d > limit {
			return fmt.Errorf("%s is more than ramjetd allows (at most %s)", core.Quote(v), shown)
		}
		return nil
	}
}
