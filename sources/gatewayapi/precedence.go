package gatewayapi

import (
	"cmp"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// compareHTTP orders the matches of one host's HTTPRoutes as the spec's
// HTTPRouteRule.Matches says, continuing on ties: an Exact path, then a
// RegularExpression path (implementation-specific; longer patterns
// first), then the PathPrefix with the most characters; then a method
// match; then the most header matches; then the most query param
// matches; then the oldest route, the route first by namespace/name, and
// the first rule and match in list order.
func compareHTTP(a, b *HTTPEntry) int {
	return cmp.Or(
		cmp.Compare(pathClass(a.Match.Path), pathClass(b.Match.Path)),
		-cmp.Compare(len(pathValue(a.Match.Path)), len(pathValue(b.Match.Path))),
		-cmp.Compare(boolInt(a.Match.Method != nil), boolInt(b.Match.Method != nil)),
		-cmp.Compare(headerCount(a.Match.Headers), headerCount(b.Match.Headers)),
		-cmp.Compare(queryCount(a.Match.QueryParams), queryCount(b.Match.QueryParams)),
		compareRefs(&a.Ref, &b.Ref),
	)
}

// compareGRPC orders the matches of one host's GRPCRoutes as the spec's
// GRPCRouteRule.Matches says: the most characters of an Exact service,
// then of an Exact method, then the most header matches; then as
// compareHTTP, by route age, namespace/name, rule and match. A
// RegularExpression method counts no characters (its precedence is
// implementation-specific) but comes before a match without a method,
// which a catch-all would otherwise shadow.
func compareGRPC(a, b *GRPCEntry) int {
	as, am := grpcMethod(a.Match.Method)
	bs, bm := grpcMethod(b.Match.Method)
	return cmp.Or(
		-cmp.Compare(as, bs),
		-cmp.Compare(am, bm),
		-cmp.Compare(boolInt(a.Match.Method != nil), boolInt(b.Match.Method != nil)),
		-cmp.Compare(grpcHeaderCount(a.Match.Headers), grpcHeaderCount(b.Match.Headers)),
		compareRefs(&a.Ref, &b.Ref),
	)
}

// compareRefs breaks ties between matches: the older route, then the
// route first by "{namespace}/{name}", then rule order, then match order.
func compareRefs(a, b *Ref) int {
	return cmp.Or(
		a.created.Compare(b.created),
		strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name),
		cmp.Compare(a.Rule, b.Rule),
		cmp.Compare(a.Match, b.Match),
	)
}

func pathClass(p *gatewayv1.HTTPPathMatch) int {
	switch *p.Type {
	case gatewayv1.PathMatchExact:
		return 0
	case gatewayv1.PathMatchRegularExpression:
		return 1
	}
	return 2
}

func pathValue(p *gatewayv1.HTTPPathMatch) string { return *p.Value }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// headerCount counts the distinct header names of a match: names match
// without regard to case, and only the first of duplicates counts.
func headerCount(hs []gatewayv1.HTTPHeaderMatch) int {
	seen := map[string]bool{}
	for _, h := range hs {
		seen[strings.ToLower(string(h.Name))] = true
	}
	return len(seen)
}

func grpcHeaderCount(hs []gatewayv1.GRPCHeaderMatch) int {
	seen := map[string]bool{}
	for _, h := range hs {
		seen[strings.ToLower(string(h.Name))] = true
	}
	return len(seen)
}

// queryCount counts the distinct query param names of a match (names are
// case-sensitive; only the first of duplicates counts).
func queryCount(qs []gatewayv1.HTTPQueryParamMatch) int {
	seen := map[string]bool{}
	for _, q := range qs {
		seen[string(q.Name)] = true
	}
	return len(seen)
}

// grpcMethod is the number of characters of a method match's Exact
// service and method.
func grpcMethod(m *gatewayv1.GRPCMethodMatch) (service, method int) {
	if m == nil || m.Type != nil && *m.Type != gatewayv1.GRPCMethodMatchExact {
		return 0, 0
	}
	if m.Service != nil {
		service = len(*m.Service)
	}
	if m.Method != nil {
		method = len(*m.Method)
	}
	return service, method
}
