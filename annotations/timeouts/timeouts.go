// Package timeouts is the timeouts family: proxy-connect-timeout and
// proxy-read-timeout become the route's timeouts (policies.timeouts), in
// seconds as ingress-nginx writes them or as Go durations ("60s"). The
// family also owns the other keys of ingress-nginx's proxy parser that
// ramjetd has no counterpart for (proxy-send-timeout, retries, buffering,
// cookie and redirect rewriting): they are ignored with a finding that says
// what ramjetd does instead.
package timeouts

import (
	"fmt"
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
	connectKey = "proxy-connect-timeout"
	readKey    = "proxy-read-timeout"
)

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
		}, ignored...),
		Parse: parse,
	})
}

// ignored are the keys of ingress-nginx's proxy parser ramjetd has no
// counterpart for.
var ignored = []registry.Key{
	ignore("proxy-send-timeout", registry.RiskLow, "60",
		"time allowed between two writes of the request to the member, in seconds",
		"ramjetd has no send timeout: the time to send the request to the member is not bounded on its own (proxy-read-timeout starts once the request is sent), "+
			"and a client whose request body stops arriving is cut after server.limits.read_body_timeout (default 60s) with 408"),
	ignore("proxy-next-upstream", registry.RiskMedium, "error timeout",
		"the failures after which a request is passed to the next member",
		"ramjetd's retry rule is fixed: a failed connection is retried for every method, and for GET, HEAD, OPTIONS, PUT and DELETE also a 502, 503 or 504 answer, "+
			"a timeout or a connection broken before the response head (ingress-nginx's default, error timeout, passes 502, 503 and 504 answers on); never once the answer has started"),
	ignore("proxy-next-upstream-tries", registry.RiskLow, "3",
		"how many tries a request may take; 0 means no limit",
		"ramjetd tries a request at most three times (ingress-nginx's default), each time on a member not tried yet"),
	ignore("proxy-next-upstream-timeout", registry.RiskLow, "0",
		"time limit on passing a request to further members, in seconds; 0 means no limit",
		"ramjetd has no overall time limit on retrying: each of the at most three tries is bounded by the connect and read timeouts"),
	ignore("proxy-buffering", registry.RiskLow, "off",
		"buffers the member's response before sending it to the client",
		"ramjetd streams responses to the client as they arrive (ingress-nginx's default, off) and cannot buffer them"),
	ignore("proxy-request-buffering", registry.RiskLow, "on",
		"reads the whole request body before sending it to the member",
		"ramjetd does not buffer request bodies: a body of at most 64 KiB with a Content-Length is read before the first try (so that it can be retried), "+
			"larger and chunked bodies stream to the member (as with proxy-request-buffering: off)"),
	ignore("proxy-buffer-size", registry.RiskLow, "4k",
		"the buffer for the first part of the response, which must hold its head",
		"ramjetd has no response buffers to size: responses stream to the client, and a member's response head may be up to 10 MiB"),
	ignore("proxy-buffers-number", registry.RiskLow, "4",
		"the number of buffers for a buffered response",
		"ramjetd streams responses and has no response buffers to count"),
	ignore("proxy-busy-buffers-size", registry.RiskLow, "",
		"how much of a buffered response may be busy being sent to the client",
		"ramjetd streams responses and has no response buffers to size"),
	ignore("proxy-max-temp-file-size", registry.RiskLow, "1024m",
		"how much of a buffered response may be written to a temporary file",
		"ramjetd never writes responses to temporary files: they stream to the client"),
	ignore("proxy-http-version", registry.RiskLow, "1.1",
		"the HTTP version spoken to members, 1.0 or 1.1",
		"ramjetd speaks HTTP/1.1 with keep-alive to members (HTTP/2 with backend-protocol GRPC or GRPCS); HTTP/1.0 cannot be chosen"),
	ignore("proxy-cookie-domain", registry.RiskMedium, "off",
		"rewrites the Domain of the member's Set-Cookie headers",
		cookiesAsSent("Domain")),
	ignore("proxy-cookie-path", registry.RiskMedium, "off",
		"rewrites the Path of the member's Set-Cookie headers",
		cookiesAsSent("Path")),
	ignore("proxy-redirect-from", registry.RiskMedium, "off",
		"with proxy-redirect-to, rewrites the Location and Refresh headers of the member's answers",
		redirectsAsSent),
	ignore("proxy-redirect-to", registry.RiskMedium, "off",
		"the replacement of proxy-redirect-from in Location and Refresh headers",
		redirectsAsSent),
}

// redirectsAsSent is what happens instead of proxy-redirect-from and -to.
const redirectsAsSent = "ramjetd does not rewrite the Location and Refresh headers of the members' answers; they reach the client as sent (ingress-nginx's default, off)"

// cookiesAsSent is what happens instead of proxy-cookie-domain and -path.
func cookiesAsSent(attribute string) string {
	return "ramjetd does not rewrite the " + attribute + " of the members' Set-Cookie headers; they reach the client as sent (ingress-nginx's default, off)"
}

// ignore declares a key ramjetd has no counterpart for: def and doc are
// ingress-nginx's default and what the key does there, instead what
// happens in Ramjet.
func ignore(name string, risk registry.Risk, def, doc, instead string) registry.Key {
	return registry.IgnoredKey(name, risk, registry.ScopeIngress, def, doc+".", instead)
}

func parse(_ *registry.Context, values map[string]string) core.Fragment {
	connect, response := duration(values, connectKey), duration(values, readKey)
	if connect == 0 && response == 0 {
		return nil // absent, or "0": the pool's defaults
	}
	return func(s *core.Settings) {
		if s.Policies.Timeouts == nil {
			s.Policies.Timeouts = &config.Timeouts{}
		}
		if connect > 0 {
			s.Policies.Timeouts.Connect = connect
		}
		if response > 0 {
			s.Policies.Timeouts.Response = response
		}
	}
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
