package gatewayapi

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// How entries become data-plane routes:
//   - Paths, headers, query parameters and methods become the route's
//     match; a RegularExpression is case-sensitive and must match the
//     whole value, as Envoy's and the Gateway API's examples expect.
//   - A rule's backendRefs become a weighted choice; an invalid ref keeps
//     its weight and answers 500, and a rule with no weight to share
//     answers 500.
//   - Filters become the route's policies: header modifiers, a redirect
//     (302 by default, as the spec says), a rewrite, mirrors, CORS; the
//     rule's timeouts and retry become the route's.
//   - gRPC entries match POST requests whose content-type is gRPC, and
//     their backends are reached over HTTP/2 (h2c, or h2 with a
//     BackendTLSPolicy).

// grpcContentType matches the content-types of gRPC requests.
const grpcContentType = `application/grpc(\+.*|;.*)?`

func gatewayKey(gw *gatewayv1.Gateway) snapshot.Key {
	return snapshot.Key{Namespace: gw.Namespace, Name: gw.Name}
}

func origin(kind string, meta *metav1.ObjectMeta) core.Origin {
	return core.Origin{Kind: kind, Namespace: meta.Namespace, Name: meta.Name, UID: string(meta.UID), Created: meta.CreationTimestamp.Time}
}

// httpRoute is the data-plane route of one HTTPRoute entry on a Gateway
// listener of the given port.
func httpRoute(order int, e *HTTPEntry, port gatewayv1.PortNumber) core.ScopedRoute {
	sr := core.ScopedRoute{Order: order, Match: httpMatch(e.Match)}
	rule := e.Rule.Rule
	mirror := 0
	for _, f := range rule.Filters {
		switch f.Type {
		case gatewayv1.HTTPRouteFilterRequestHeaderModifier:
			sr.Policies.RequestHeaders = headerChanges(f.RequestHeaderModifier)
		case gatewayv1.HTTPRouteFilterResponseHeaderModifier:
			sr.Policies.ResponseHeaders = headerChanges(f.ResponseHeaderModifier)
		case gatewayv1.HTTPRouteFilterRequestRedirect:
			sr.Redirect = redirect(f.RequestRedirect, port)
		case gatewayv1.HTTPRouteFilterURLRewrite:
			sr.Policies.Rewrite = rewrite(f.URLRewrite)
		case gatewayv1.HTTPRouteFilterRequestMirror:
			if m := e.Rule.Mirrors[mirror]; m.Valid() {
				sr.Mirrors = append(sr.Mirrors, core.Mirror{Backend: coreBackend(m), Pool: poolSettings(m, false), Fraction: fraction(f.RequestMirror)})
			}
			mirror++
		case gatewayv1.HTTPRouteFilterCORS:
			sr.Policies.CORS = cors(f.CORS)
		}
	}
	sr.Policies.Timeouts = timeouts(rule.Timeouts)
	sr.Policies.Retry = retry(rule.Retry)
	if sr.Redirect == nil {
		sr.Backends, sr.Respond = backends(e.Rule.Backends, false)
	}
	return sr
}

// grpcRoute is the data-plane route of one GRPCRoute entry.
func grpcRoute(order int, e *GRPCEntry) core.ScopedRoute {
	sr := core.ScopedRoute{Order: order, Match: grpcMatch(e.Match)}
	mirror := 0
	for _, f := range e.Rule.Rule.Filters {
		switch f.Type {
		case gatewayv1.GRPCRouteFilterRequestHeaderModifier:
			sr.Policies.RequestHeaders = headerChanges(f.RequestHeaderModifier)
		case gatewayv1.GRPCRouteFilterResponseHeaderModifier:
			sr.Policies.ResponseHeaders = headerChanges(f.ResponseHeaderModifier)
		case gatewayv1.GRPCRouteFilterRequestMirror:
			if m := e.Rule.Mirrors[mirror]; m.Valid() {
				sr.Mirrors = append(sr.Mirrors, core.Mirror{Backend: coreBackend(m), Pool: poolSettings(m, true), Fraction: fraction(f.RequestMirror)})
			}
			mirror++
		}
	}
	sr.Backends, sr.Respond = backends(e.Rule.Backends, true)
	return sr
}

// wholeRegex makes a Gateway API regular expression the data plane's:
// case-sensitive, matching the whole path.
func wholeRegex(re string) string { return "(?-i:(?:" + re + "))$" }

func httpMatch(m gatewayv1.HTTPRouteMatch) config.Match {
	var out config.Match
	value := *m.Path.Value
	switch *m.Path.Type {
	case gatewayv1.PathMatchExact:
		out.Path.Exact = value
	case gatewayv1.PathMatchRegularExpression:
		out.Path.Regex = wholeRegex(value)
	default:
		out.Path.Prefix = value
	}
	if m.Method != nil {
		out.Method = string(*m.Method)
	}
	for _, h := range m.Headers {
		out.Headers = addHeaderMatch(out.Headers, string(h.Name), h.Value, h.Type != nil && *h.Type == gatewayv1.HeaderMatchRegularExpression)
	}
	for _, q := range m.QueryParams {
		if slices.ContainsFunc(out.Query, func(o config.QueryMatch) bool { return o.Name == string(q.Name) }) {
			continue
		}
		qm := config.QueryMatch{Name: string(q.Name), Exact: q.Value}
		if q.Type != nil && *q.Type == gatewayv1.QueryParamMatchRegularExpression {
			qm = config.QueryMatch{Name: string(q.Name), Regex: q.Value}
		}
		out.Query = append(out.Query, qm)
	}
	return out
}

// addHeaderMatch adds a header match unless one of the same name is there
// already: the spec says only the first match of a name counts.
func addHeaderMatch(ms []config.HeaderMatch, name, value string, regex bool) []config.HeaderMatch {
	if slices.ContainsFunc(ms, func(o config.HeaderMatch) bool { return strings.EqualFold(o.Name, name) }) {
		return ms
	}
	if regex {
		return append(ms, config.HeaderMatch{Name: name, Regex: value})
	}
	return append(ms, config.HeaderMatch{Name: name, Exact: value})
}

// grpcMatch matches a gRPC method: the path /service/method.
func grpcMatch(m gatewayv1.GRPCRouteMatch) config.Match {
	out := config.Match{Method: "POST", Headers: []config.HeaderMatch{{Name: "Content-Type", Regex: grpcContentType}}}
	out.Path = grpcPath(m.Method)
	for _, h := range m.Headers {
		out.Headers = addHeaderMatch(out.Headers, string(h.Name), h.Value, h.Type != nil && *h.Type == gatewayv1.GRPCHeaderMatchRegularExpression)
	}
	return out
}

func grpcPath(m *gatewayv1.GRPCMethodMatch) config.PathMatch {
	if m == nil || (m.Service == nil && m.Method == nil) {
		return config.PathMatch{Prefix: "/"}
	}
	regexType := m.Type != nil && *m.Type == gatewayv1.GRPCMethodMatchRegularExpression
	service, method := deref(m.Service), deref(m.Method)
	if !regexType {
		switch {
		case method == "":
			return config.PathMatch{Prefix: "/" + service}
		case service != "":
			return config.PathMatch{Exact: "/" + service + "/" + method}
		}
		return config.PathMatch{Regex: wholeRegex(`/[^/]+/` + regexp.QuoteMeta(method))}
	}
	if service == "" {
		service = `[^/]+`
	}
	if method == "" {
		method = `[^/]+`
	}
	return config.PathMatch{Regex: wholeRegex("/(?:" + service + ")/(?:" + method + ")")}
}

func deref[T ~string](p *T) string {
	if p == nil {
		return ""
	}
	return string(*p)
}

func headerChanges(f *gatewayv1.HTTPHeaderFilter) *config.HeaderChanges {
	if f == nil {
		return nil
	}
	out := &config.HeaderChanges{Remove: f.Remove}
	for _, h := range f.Set {
		out.Set = append(out.Set, config.Header{Name: string(h.Name), Value: h.Value})
	}
	for _, h := range f.Add {
		out.Add = append(out.Add, config.Header{Name: string(h.Name), Value: h.Value})
	}
	return out
}

// redirect maps a RequestRedirect; its code defaults to 302. Without a
// port or a scheme the Location takes the Gateway listener's port, as the
// spec says (not the data-plane listener's, which is a pod port in the
// own-address mode).
func redirect(f *gatewayv1.HTTPRequestRedirectFilter, listenerPort gatewayv1.PortNumber) *config.Redirect {
	out := &config.Redirect{Code: 302, Scheme: deref(f.Scheme)}
	if f.StatusCode != nil {
		out.Code = *f.StatusCode
	}
	if f.Hostname != nil {
		out.Hostname = string(*f.Hostname)
	}
	switch {
	case f.Port != nil:
		out.Port = int(*f.Port)
	case out.Scheme == "":
		out.Port = int(listenerPort)
	}
	out.Path, out.PathPrefix = pathModifier(f.Path)
	return out
}

func rewrite(f *gatewayv1.HTTPURLRewriteFilter) *config.Rewrite {
	out := &config.Rewrite{}
	if f.Hostname != nil {
		out.Host = string(*f.Hostname)
	}
	out.Path, out.PathPrefix = pathModifier(f.Path)
	return out
}

func pathModifier(p *gatewayv1.HTTPPathModifier) (full string, prefix *string) {
	switch {
	case p == nil:
		return "", nil
	case p.Type == gatewayv1.FullPathHTTPPathModifier && p.ReplaceFullPath != nil:
		return *p.ReplaceFullPath, nil
	case p.Type == gatewayv1.PrefixMatchHTTPPathModifier && p.ReplacePrefixMatch != nil:
		v := *p.ReplacePrefixMatch
		return "", &v
	}
	return "", nil
}

// fraction is a mirror's share: Percent, or Fraction; nil mirrors every
// request.
func fraction(f *gatewayv1.HTTPRequestMirrorFilter) *config.Fraction {
	switch {
	case f.Percent != nil:
		return &config.Fraction{Numerator: uint32(*f.Percent), Denominator: 100}
	case f.Fraction != nil:
		d := int32(100)
		if f.Fraction.Denominator != nil {
			d = *f.Fraction.Denominator
		}
		return &config.Fraction{Numerator: uint32(f.Fraction.Numerator), Denominator: uint32(d)}
	}
	return nil
}

// cors maps the CORS filter. Its maxAge defaults to 5 seconds, as the
// spec says; an empty list of methods allows none but the simple ones,
// which the data plane writes as GET, HEAD and POST.
func cors(f *gatewayv1.HTTPCORSFilter) *config.CORS {
	out := &config.CORS{MaxAge: config.Duration(5 * time.Second), GatewayAPI: true}
	if f.MaxAge > 0 {
		out.MaxAge = config.Duration(time.Duration(f.MaxAge) * time.Second)
	}
	for _, o := range f.AllowOrigins {
		out.AllowOrigins = append(out.AllowOrigins, string(o))
	}
	out.AllowCredentials = f.AllowCredentials != nil && *f.AllowCredentials
	for _, m := range f.AllowMethods {
		out.AllowMethods = append(out.AllowMethods, string(m))
	}
	if len(out.AllowMethods) == 0 {
		out.AllowMethods = []string{"GET", "HEAD", "POST"}
	}
	for _, h := range f.AllowHeaders {
		out.AllowHeaders = append(out.AllowHeaders, string(h))
	}
	for _, h := range f.ExposeHeaders {
		out.ExposeHeaders = append(out.ExposeHeaders, string(h))
	}
	return out
}

func timeouts(t *gatewayv1.HTTPRouteTimeouts) *config.Timeouts {
	if t == nil || (t.Request == nil && t.BackendRequest == nil) {
		return nil
	}
	return &config.Timeouts{Request: duration(t.Request), BackendRequest: duration(t.BackendRequest)}
}

func retry(r *gatewayv1.HTTPRouteRetry) *config.Retry {
	if r == nil {
		return nil
	}
	out := &config.Retry{Attempts: r.Attempts, Backoff: duration(r.Backoff)}
	for _, c := range r.Codes {
		out.Codes = append(out.Codes, int(c))
	}
	return out
}

// duration parses a Gateway API duration ("1h2m3s4ms", validated by the
// API server's schema); "0s" and nil are zero, no bound.
func duration(d *gatewayv1.Duration) config.Duration {
	if d == nil {
		return 0
	}
	v, err := time.ParseDuration(string(*d))
	if err != nil {
		return 0
	}
	return config.Duration(v)
}

// backends are the weighted choices of a rule, or the 500 of a rule with
// no weight to share.
func backends(bs []*Backend, grpc bool) ([]core.WeightedBackend, *config.Respond) {
	var out []core.WeightedBackend
	total := 0
	for _, b := range bs {
		total += int(b.Weight)
		if !b.Valid() || (b.TLS != nil && b.TLS.Invalid) {
			out = append(out, core.WeightedBackend{Weight: uint32(b.Weight), Status: 500})
			continue
		}
		out = append(out, core.WeightedBackend{Backend: coreBackend(b), Pool: poolSettings(b, grpc), Weight: uint32(b.Weight)})
	}
	if total == 0 {
		return nil, &config.Respond{Status: 500, Body: "Internal Server Error\n"}
	}
	return out, nil
}

func coreBackend(b *Backend) *core.Backend {
	return &core.Backend{Namespace: b.Namespace, Service: b.Name, Port: strconv.Itoa(int(b.Port)), Members: b.Members}
}

// poolSettings are how a backend is reached: HTTP/2 for gRPC and h2c
// appProtocols, TLS with a BackendTLSPolicy.
func poolSettings(b *Backend, grpc bool) core.PoolSettings {
	var s core.PoolSettings
	h2 := grpc || b.AppProtocol == AppProtocolH2C
	switch {
	case b.TLS != nil && h2:
		s.Scheme = config.SchemeH2
	case b.TLS != nil:
		s.Scheme = config.SchemeHTTPS
	case h2:
		s.Scheme = config.SchemeH2C
	}
	if t := b.TLS; t != nil {
		s.ServerName = strings.ToLower(t.Hostname)
		if !t.System {
			s.CA = t.CACertificates
		}
	}
	return s
}
