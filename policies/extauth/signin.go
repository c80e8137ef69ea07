package extauth

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// signin turns a 401 into a redirect to a sign-in page, as ingress-nginx's
// auth-signin: the page's URL gets
// "<param>=<scheme>://<host><escaped request URI>" appended (after "?", or
// "&" when it has a query already), unless its query has the parameter
// already, in which case it is used as it is. Variables in the URL
// (config.AuthVariables) are interpolated for each request.
type signin struct {
	prefix string // the URL up to the original URL's value; "" when the URL is used as it is
	url    string
	vars   template // prefix, or url when prefix is "", with variables
}

func newSignin(raw, param string) *signin {
	if raw == "" {
		return nil
	}
	if param == "" {
		param = config.DefaultAuthSigninParam
	}
	_, query, hasQuery := strings.Cut(raw, "?")
	q, _ := url.ParseQuery(query)
	s := &signin{url: raw}
	switch {
	case q.Get(param) != "":
		s.vars = newTemplate(raw)
		return s
	case !hasQuery || len(q) == 0:
		s.prefix = raw + "?" + param + "="
	default:
		s.prefix = raw + "&" + param + "="
	}
	s.vars = newTemplate(s.prefix)
	return s
}

// location is the redirect's target for x.
func (s *signin) location(x *exchange.Request) string {
	if s.prefix == "" {
		if s.vars != nil {
			return s.vars.expand(x)
		}
		return s.url
	}
	prefix := s.prefix
	if s.vars != nil {
		prefix = s.vars.expand(x)
	}
	return prefix + x.Scheme + "://" + x.HTTP.Host + escapeURIComponent(requestURI(x.HTTP))
}

// escapeURIComponent escapes every byte but letters, digits and "-._~", as
// nginx's set_escape_uri, which ingress-nginx uses for the request URI.
func escapeURIComponent(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

// redirect answers 302 to the sign-in page, with the service's Set-Cookie
// (ingress-nginx adds it to the redirect).
func (s *signin) redirect(w http.ResponseWriter, x *exchange.Request, o *outcome) {
	hd := w.Header()
	if len(o.cookies) > 0 {
		hd["Set-Cookie"] = o.cookies
	}
	hd.Set("Location", s.location(x))
	answer(w, x.HTTP, http.StatusFound, "Found: sign in first\n")
}
