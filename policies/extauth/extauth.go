// Package extauth is the route policy that asks an HTTP service whether
// each request may pass, as ingress-nginx's auth-url (nginx auth_request).
// The subrequest has no body; it carries the client's headers (without
// hop-by-hop headers and Content-Length), the forwarding headers ramjetd
// sends members, X-Original-URL, X-Original-Method,
// X-Auth-Request-Redirect, X-Sent-From and the configured headers.
//
// A 2xx answer lets the request through, with the configured response
// headers copied onto it (replacing, or removing, what the client sent)
// and the service's Set-Cookie added to the answer. A 401 or a 403 goes
// back to the client with the service's WWW-Authenticate (and Set-Cookie
// with always_set_cookie); with a sign-in URL, a 401 becomes a 302 to it
// carrying the original URL. Any other answer, a timeout or a connection
// failure is a 500: the policy never lets a request through it could not
// judge.
//
// The client to the service is built once per configuration (New), never
// per request. Every address it connects to passes the address rule of
// members (config.CheckMemberIP), loopback allowed only with
// Options.AllowLoopback. Outcomes may be cached (see Cache); without a
// cache the request path takes no lock of this package.
package extauth

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
	"github.com/ramjet-dev/ramjet/dataplane/proxy"
)

// Options are what the policy takes from outside its configuration.
type Options struct {
	// AllowLoopback lets the service be at a loopback address
	// (server.admin.allow_loopback_members).
	AllowLoopback bool
	// Log receives a line for each subrequest that failed.
	Log *slog.Logger
	// Listeners are ramjetd's listeners, where a self subrequest
	// (config.ExternalAuth.Self) goes.
	Listeners map[string]*config.Listener
	// Bound, when set, is the address a listener is bound to ("" before
	// it is), which a self subrequest prefers to the configured one (port
	// 0 in the configuration binds any port).
	Bound func(listener string) string
	// Counters count outcomes, [source][outcome]: source 0 the service, 1
	// the cache; outcome 0 allowed, 1 unauthorized, 2 forbidden, 3 failed
	// (metrics.Metrics.ExternalAuth). Nil counts nothing.
	Counters *[2][4]prometheus.Counter
}

// Handler judges each request by the service's answer before passing it to
// the next handler.
type Handler struct {
	url             *url.URL // the service's URL, unless it has variables
	urlTemplate     template // the service's URL with variables, parsed per request
	rawURL          string   // the service's URL as configured, for logs
	self            bool     // subrequests go to ramjetd itself, marked by selfHeader
	method          string
	sendOriginalURI bool // a method was configured: X-Original-URI, as ingress-nginx
	requestRedirect string
	redirectVars    template // requestRedirect with variables
	setHeaders      []setHeader
	copyHeaders     []string // canonical names
	signin          *signin
	alwaysCookie    bool
	timeout         time.Duration // bounds the whole subrequest
	client          *client
	cache           *Cache
	counters        *[2][4]prometheus.Counter
	log             *slog.Logger
	next            exchange.Handler
}

// New builds the policy of cfg, validated, in front of next; it reads the
// CA file and builds the client to the service.
func New(cfg *config.ExternalAuth, opts Options, next exchange.Handler) (*Handler, error) {
	parts, err := config.ParseAuthURL(cfg.URL, false)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	self, err := selfAddress(cfg, parts, opts)
	if err != nil {
		return nil, err
	}
	connect, response := timeoutsOf(cfg.Timeouts)
	c, err := newClient(cfg, parts, self, opts.AllowLoopback, connect, response)
	if err != nil {
		return nil, err
	}
	h := &Handler{
		urlTemplate: newTemplate(cfg.URL), rawURL: cfg.URL, self: cfg.Self,
		method: cfg.Method, sendOriginalURI: cfg.Method != "", requestRedirect: cfg.RequestRedirect, redirectVars: newTemplate(cfg.RequestRedirect),
		signin:       newSignin(cfg.SigninURL, cfg.SigninRedirectParam),
		alwaysCookie: cfg.AlwaysSetCookie, timeout: connect + response, client: c, counters: opts.Counters, log: opts.Log, next: next,
	}
	if h.urlTemplate == nil {
		if h.url, err = url.Parse(cfg.URL); err != nil {
			return nil, fmt.Errorf("url: %w", err)
		}
	}
	if h.method == "" {
		h.method = http.MethodGet
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	for name, value := range cfg.ProxySetHeaders {
		h.setHeaders = append(h.setHeaders, setHeader{name: http.CanonicalHeaderKey(name), value: value, vars: newTemplate(value)})
	}
	for _, name := range cfg.ResponseHeaders {
		h.copyHeaders = append(h.copyHeaders, http.CanonicalHeaderKey(name))
	}
	if cfg.Cache != nil {
		h.cache = NewCache(cfg.Cache)
	}
	return h, nil
}

// setHeader is a header of proxy_set_headers.
type setHeader struct {
	name  string // canonical
	value string
	vars  template // value with variables
}

// apply sets the header on hd for x, or removes it when its value is empty.
func (s setHeader) apply(hd http.Header, x *exchange.Request) {
	value := s.value
	if s.vars != nil {
		value = s.vars.expand(x)
	}
	if value == "" {
		delete(hd, s.name)
		return
	}
	hd[s.name] = []string{value}
}

func timeoutsOf(t *config.Timeouts) (connect, response time.Duration) {
	if t == nil {
		return config.DefaultAuthConnectTimeout, config.DefaultAuthResponseTimeout
	}
	return t.Connect.Or(config.DefaultAuthConnectTimeout), t.Response.Or(config.DefaultAuthResponseTimeout)
}

// Close closes the idle connections to the service; subrequests in flight
// finish. The daemon calls it when a reload replaces the policy.
func (h *Handler) Close() { h.client.close() }

// Serve asks the service (or the cache) and passes x on, or answers. A
// self subrequest of ramjetd that reaches external authentication again is
// a loop, answered 500.
func (h *Handler) Serve(w http.ResponseWriter, x *exchange.Request) {
	if isSelfSubrequest(x.HTTP) {
		h.log.Warn("external authentication: a self subrequest reached a route with external authentication (a loop): answering 500; "+
			"the authentication service's route must not be authenticated itself", "url", h.rawURL)
		fail(w, x.HTTP)
		return
	}
	o := h.judge(x)
	switch {
	case o.status == http.StatusOK:
		h.pass(w, x, o)
	case o.status == http.StatusUnauthorized && h.signin != nil:
		h.signin.redirect(w, x, o)
	case o.status == http.StatusUnauthorized, o.status == http.StatusForbidden:
		h.deny(w, x.HTTP, o)
	default:
		fail(w, x.HTTP)
	}
}

// judge returns the outcome for x, from the cache when it holds one.
func (h *Handler) judge(x *exchange.Request) *outcome {
	proxy.EnsureRequestID(x.HTTP.Header)
	if h.cache == nil {
		return h.count(fromService, h.ask(x))
	}
	k := h.cache.key(x)
	if o, ok := h.cache.get(k); ok {
		return h.count(fromCache, o)
	}
	o := h.ask(x)
	h.cache.put(k, o)
	return h.count(fromService, o)
}

// The sources of an outcome, indexes of Options.Counters.
const (
	fromService = 0
	fromCache   = 1
)

// count counts o from source and returns it.
func (h *Handler) count(source int, o *outcome) *outcome {
	if h.counters == nil {
		return o
	}
	i := 3
	switch o.status {
	case http.StatusOK:
		i = 0
	case http.StatusUnauthorized:
		i = 1
	case http.StatusForbidden:
		i = 2
	}
	h.counters[source][i].Inc()
	return o
}

// ask sends the subrequest and reads the service's answer.
func (h *Handler) ask(x *exchange.Request) *outcome {
	ctx, cancel := context.WithTimeout(x.HTTP.Context(), h.timeout)
	defer cancel()
	req, err := h.subrequest(ctx, x)
	if err == nil {
		var resp *http.Response
		if resp, err = h.client.roundTrip(req); err == nil {
			return h.read(resp)
		}
	}
	h.log.Warn("external authentication failed: answering 500", "url", h.rawURL, "error", err)
	return failed
}

// read is the outcome of the service's answer.
func (h *Handler) read(resp *http.Response) *outcome {
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrainBytes))
	o := h.outcomeOf(resp)
	if o == failed {
		h.log.Warn("external authentication answered neither 2xx, 401 nor 403: answering 500", "url", h.rawURL, "status", resp.StatusCode)
	}
	return o
}

// maxDrainBytes is how much of an answer's body is read so that its
// connection can be reused; the body is never used.
const maxDrainBytes = 64 << 10

// pass copies the service's headers onto the request and passes it on.
func (h *Handler) pass(w http.ResponseWriter, x *exchange.Request, o *outcome) {
	for i, name := range h.copyHeaders {
		if values := o.copied[i]; len(values) > 0 {
			x.HTTP.Header[name] = values
		} else {
			delete(x.HTTP.Header, name)
		}
	}
	if len(o.cookies) > 0 {
		w = exchange.EditHeader(w, func(hd http.Header) { hd["Set-Cookie"] = append(hd["Set-Cookie"], o.cookies...) })
	}
	h.next.Serve(w, x)
}

// deny answers the service's 401 or 403.
func (h *Handler) deny(w http.ResponseWriter, r *http.Request, o *outcome) {
	hd := w.Header()
	if len(o.challenge) > 0 {
		hd["Www-Authenticate"] = o.challenge
	}
	if h.alwaysCookie && len(o.cookies) > 0 {
		hd["Set-Cookie"] = o.cookies
	}
	body := "Forbidden: the authentication service refused the request\n"
	if o.status == http.StatusUnauthorized {
		body = "Unauthorized: the authentication service asks for credentials\n"
	}
	answer(w, r, o.status, body)
}

// fail answers 500: the service could not judge the request.
func fail(w http.ResponseWriter, r *http.Request) {
	answer(w, r, http.StatusInternalServerError, "Internal Server Error: the authentication service could not be asked\n")
}

func answer(w http.ResponseWriter, r *http.Request, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		io.WriteString(w, body)
	}
}

// requestURI is the request's target as the client sent it.
func requestURI(r *http.Request) string {
	if r.RequestURI != "" && strings.HasPrefix(r.RequestURI, "/") {
		return r.RequestURI
	}
	return r.URL.RequestURI()
}
