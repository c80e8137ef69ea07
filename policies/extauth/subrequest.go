package extauth

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/url"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
	"github.com/ramjet-dev/ramjet/dataplane/proxy"
)

// sentFrom is the X-Sent-From of subrequests, ingress-nginx's value, which
// authentication services written for it may check.
const sentFrom = "nginx-ingress-controller"

// selfHeader marks ramjetd's self subrequests with selfToken, a secret of
// the process: a request holding it that reaches external authentication
// is a loop. A client cannot forge it; a service that learns it can only
// make its own requests fail.
const selfHeader = "Ramjet-Auth-Subrequest"

var selfToken = rand.Text()

// isSelfSubrequest reports whether r is a self subrequest of this process.
func isSelfSubrequest(r *http.Request) bool {
	v := r.Header[selfHeader]
	return len(v) == 1 && v[0] == selfToken
}

// subrequest builds the request to the service for x: no body, the
// headers ramjetd forwards, and those of ingress-nginx's auth location.
// It fails only when the URL's variables make it no URL.
func (h *Handler) subrequest(ctx context.Context, x *exchange.Request) (*http.Request, error) {
	target := h.url
	if h.urlTemplate != nil {
		u, err := url.Parse(h.urlTemplate.expand(x))
		if err != nil {
			return nil, fmt.Errorf("the url with the request's variables: %w", err)
		}
		target = u
	}
	hd := make(http.Header, len(x.HTTP.Header)+12)
	proxy.CopyForwardable(hd, x)
	uri := requestURI(x.HTTP)
	hd.Set("X-Original-Url", x.Scheme+"://"+x.HTTP.Host+uri)
	hd.Set("X-Original-Method", x.HTTP.Method)
	switch {
	case h.redirectVars != nil:
		hd.Set("X-Auth-Request-Redirect", h.redirectVars.expand(x))
	case h.requestRedirect != "":
		hd.Set("X-Auth-Request-Redirect", h.requestRedirect)
	default:
		hd.Set("X-Auth-Request-Redirect", uri)
	}
	if h.sendOriginalURI {
		hd.Set("X-Original-Uri", uri)
	}
	hd.Set("X-Sent-From", sentFrom)
	if _, ok := hd["User-Agent"]; !ok {
		hd["User-Agent"] = []string{""} // keep net/http from adding its own
	}
	for _, s := range h.setHeaders {
		s.apply(hd, x)
	}
	if h.self {
		hd[selfHeader] = []string{selfToken}
	}
	req := &http.Request{
		Method: h.method, URL: target, Host: target.Host, Header: hd,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Body: http.NoBody,
	}
	return req.WithContext(ctx), nil
}
