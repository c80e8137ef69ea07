package extauth

import (
	"net"
	"strings"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// template is a value with request variables (config.AuthVariables),
// interpolated for each request; nil when the value has none.
type template []config.Segment

// newTemplate parses a validated value; it is nil without variables.
func newTemplate(v string) template {
	if !config.HasAuthVariables(v) {
		return nil
	}
	segs, err := config.ParseAuthTemplate(v)
	if err != nil {
		return nil
	}
	return segs
}

// expand is the template's value for x.
func (t template) expand(x *exchange.Request) string {
	var b strings.Builder
	for _, s := range t {
		if s.Var == "" {
			b.WriteString(s.Text)
		} else {
			b.WriteString(variable(s.Var, x))
		}
	}
	return b.String()
}

// variable is the value of one of config.AuthVariables for x.
func variable(name string, x *exchange.Request) string {
	r := x.HTTP
	switch name {
	case "host":
		return hostOf(r.Host)
	case "http_host", "best_http_host":
		return r.Host
	case "scheme", "pass_access_scheme":
		return x.Scheme
	case "request_uri":
		return requestURI(r)
	case "escaped_request_uri":
		return escapeURIComponent(requestURI(r))
	case "args":
		return r.URL.RawQuery
	case "request_method":
		return r.Method
	case "remote_addr":
		if x.ClientIP.IsValid() {
			return x.ClientIP.String()
		}
	}
	return ""
}

// hostOf is nginx's $host of a Host header: lower case, without port (an
// IPv6 address keeps its brackets).
func hostOf(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
		if strings.Contains(h, ":") {
			host = "[" + h + "]"
		}
	}
	return strings.ToLower(host)
}
