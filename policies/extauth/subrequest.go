package extauth

import (
	"context"
	"net/http"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
	"github.com/ramjet-dev/ramjet/dataplane/proxy"
)

// sentFrom is the X-Sent-From of subrequests, ingress-nginx's value, which
// authentication services written for it may check.
const sentFrom = "nginx-ingress-controller"

// subrequest builds the request to the service for x: no body, the
// headers ramjetd forwards, and those of ingress-nginx's auth location.
func (h *Handler) subrequest(ctx context.Context, x *exchange.Request) *http.Request {
	hd := make(http.Header, len(x.HTTP.Header)+12)
	proxy.CopyForwardable(hd, x)
	uri := requestURI(x.HTTP)
	hd.Set("X-Original-Url", x.Scheme+"://"+x.HTTP.Host+uri)
	hd.Set("X-Original-Method", x.HTTP.Method)
	if h.requestRedirect != "" {
		hd.Set("X-Auth-Request-Redirect", h.requestRedirect)
	} else {
		hd.Set("X-Auth-Request-Redirect", uri)
	}
	if h.sendOriginalURI {
		hd.Set("X-Original-Uri", uri)
	}
	hd.Set("X-Sent-From", sentFrom)
	if _, ok := hd["User-Agent"]; !ok {
		hd["User-Agent"] = []string{""} // keep net/http from adding its own
	}
	for name, values := range h.setHeaders {
		hd[name] = values
	}
	req := &http.Request{
		Method: h.method, URL: h.url, Host: h.url.Host, Header: hd,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Body: http.NoBody,
	}
	return req.WithContext(ctx)
}
