package core

import "github.com/ramjet-dev/ramjet/dataplane/config"

// errorPages renders an object's error pages on one of its routes: the
// fallback pool is the default-backend Service with the route's pool
// settings (ingress-nginx copies the path's upstream), and the error
// backend is that Service, else the controller's default backend, as
// plain HTTP (ingress-nginx's @custom_ locations proxy over HTTP). The
// X-Service-* values are the route's Service and port as the object
// names them. Nil when there is nothing to render.
func (r *rendering) errorPages(c *Contribution, route *Route, ep *ErrorPages) *config.ErrorPages {
	out := &config.ErrorPages{Namespace: c.Origin.Namespace, Ingress: c.Origin.Name}
	if b := route.Backend; b != nil {
		out.Service, out.ServicePort = b.Service, b.Port
	}
	if ep.Backend != nil {
		out.FallbackPool = r.poolAction(c, ep.Backend, c.Settings.Pool).Pool
	}
	if len(ep.Statuses) > 0 {
		var pages config.Action
		switch {
		case ep.Backend != nil:
			pages = r.poolAction(c, ep.Backend, PoolSettings{})
		case r.opts.DefaultBackend != nil:
			pages = r.poolAction(nil, r.opts.DefaultBackend, PoolSettings{})
		default:
			r.noErrorPagesBackend(c)
		}
		if pages.Pool != "" {
			out.Statuses, out.Pool, out.OwnAnswersOnly = ep.Statuses, pages.Pool, ep.OwnAnswersOnly
		}
	}
	if out.Pool == "" && out.FallbackPool == "" {
		return nil
	}
	return out
}

// noErrorPagesBackend reports, once per object, custom-http-errors without
// an error backend to send them to.
func (r *rendering) noErrorPagesBackend(c *Contribution) {
	if r.noErrorBackend[c] {
		return
	}
	if r.noErrorBackend == nil {
		r.noErrorBackend = map[*Contribution]bool{}
	}
	r.noErrorBackend[c] = true
	r.findings = append(r.findings, Finding{Object: c.Origin, Reason: InvalidAnnotation,
		Message: "nginx.ingress.kubernetes.io/custom-http-errors cannot be served: the object has no default-backend and the controller runs without --default-backend, " +
			"so there is no error backend to send the answers to; the key is ignored and the answers reach the client unchanged"})
}
