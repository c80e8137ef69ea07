package config

import (
	"fmt"
	"time"
)

// ErrorPages sends some answers of a route to an error backend, whose
// answer the client gets instead (ingress-nginx's custom-http-errors with
// nginx's proxy_intercept_errors and error_page), and serves the route
// from a fallback pool while its own pool has no members (ingress-nginx's
// default-backend annotation).
//
// The error backend receives a GET of "/" (the query kept) without a body,
// with the headers X-Code (the original status), X-Format (the request's
// Accept), X-Original-URI, X-Namespace, X-Ingress-Name, X-Service-Name,
// X-Service-Port, X-Request-ID, X-Forwarded-For (the client's address) and
// the request's Host. Its status, headers and body go to the client. When
// it cannot be reached or does not answer within Timeout, the client gets
// the original answer.
type ErrorPages struct {
	// Statuses are the intercepted statuses, 400..599, at most
	// MaxErrorPageStatuses. Empty intercepts nothing (FallbackPool alone).
	Statuses []int `yaml:"statuses,omitempty" json:"statuses,omitempty"`
	// Pool is the tenant's pool of the error backend; required with
	// Statuses.
	Pool string `yaml:"pool,omitempty" json:"pool,omitempty"`
	// OwnAnswersOnly intercepts only ramjetd's own answers (no members,
	// a member unreachable or too slow: 502, 503, 504; a request body too
	// large: 413); the members' answers reach the client unchanged
	// (ingress-nginx's disable-proxy-intercept-errors).
	OwnAnswersOnly bool `yaml:"own_answers_only,omitempty" json:"own_answers_only,omitempty"`
	// Timeout bounds the request to the error backend, its answer's body
	// included; zero means DefaultErrorPageTimeout, at most
	// MaxErrorPageTimeout.
	Timeout Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	// FallbackPool serves the route's requests while the route's pool has
	// no members, with the headers X-Code: 503, X-Format, X-Namespace,
	// X-Ingress-Name, X-Service-Name, X-Service-Port and X-Request-ID
	// added; empty answers 503 then (or the error backend does, when 503
	// is listed).
	FallbackPool string `yaml:"fallback_pool,omitempty" json:"fallback_pool,omitempty"`
	// Namespace, Ingress, Service and ServicePort are the values of the
	// X-Namespace, X-Ingress-Name, X-Service-Name and X-Service-Port
	// headers: the object and the Service port the route comes from. Each
	// is at most 253 bytes of printable ASCII without spaces; empty sends
	// an empty header, as nginx does for an unset variable.
	Namespace   string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	Ingress     string `yaml:"ingress,omitempty" json:"ingress,omitempty"`
	Service     string `yaml:"service,omitempty" json:"service,omitempty"`
	ServicePort string `yaml:"service_port,omitempty" json:"service_port,omitempty"`
}

// Bounds of ErrorPages.
const (
	MaxErrorPageStatuses    = 200
	DefaultErrorPageTimeout = 10 * time.Second
	MaxErrorPageTimeout     = 60 * time.Second
	maxErrorPageLabel       = 253
)

// TimeoutOrDefault is Timeout, or DefaultErrorPageTimeout when zero.
func (e *ErrorPages) TimeoutOrDefault() time.Duration {
	if e.Timeout == 0 {
		return DefaultErrorPageTimeout
	}
	return e.Timeout.Std()
}

// validate checks the fields; the tenant checks the pools exist.
func (e *ErrorPages) validate(l *errorList, path string) {
	if len(e.Statuses) > MaxErrorPageStatuses {
		l.add(path+".statuses", "at most %d statuses, got %d", MaxErrorPageStatuses, len(e.Statuses))
	}
	checkErrorStatuses(l, path+".statuses", e.Statuses)
	switch {
	case len(e.Statuses) > 0 && e.Pool == "":
		l.add(path+".pool", "is required with statuses: it is the error backend that answers them")
	case len(e.Statuses) == 0 && e.Pool != "":
		l.add(path+".statuses", "are required with pool: they are the answers the error backend replaces")
	case len(e.Statuses) == 0 && e.FallbackPool == "":
		l.add(path, "needs statuses and pool, or fallback_pool")
	}
	if e.OwnAnswersOnly && len(e.Statuses) == 0 {
		l.add(path+".own_answers_only", "needs statuses")
	}
	if e.Timeout < 0 || e.Timeout.Std() > MaxErrorPageTimeout {
		l.add(path+".timeout", "must be 0 (the default, %s) to %s", Duration(DefaultErrorPageTimeout), Duration(MaxErrorPageTimeout))
	}
	for _, f := range []struct{ name, value string }{
		{"namespace", e.Namespace}, {"ingress", e.Ingress}, {"service", e.Service}, {"service_port", e.ServicePort},
	} {
		if err := checkErrorPageLabel(f.value); err != nil {
			l.add(path+"."+f.name, "%v", err)
		}
	}
}

// checkErrorPageLabel refuses a header value that is too long or holds a
// space, a control character or a byte outside ASCII.
func checkErrorPageLabel(v string) error {
	if len(v) > maxErrorPageLabel {
		return fmt.Errorf("must be at most %d bytes, got %d", maxErrorPageLabel, len(v))
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= ' ' || c >= 0x7f {
			return fmt.Errorf("must be printable ASCII without spaces, got byte %#x at %d", c, i)
		}
	}
	return nil
}
