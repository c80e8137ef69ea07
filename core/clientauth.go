package core

import "github.com/ramjet-dev/ramjet/dataplane/config"

// mergeClientAuth decides each host's client certificate authentication,
// as nginx's ssl_verify_client is a server's: only the namespace that owns
// the host sets it, and of its served objects with a rule for the host the
// oldest that sets one wins (as ingress-nginx takes the oldest Ingress's
// auth-tls-*). An object that asks for other settings, or belongs to
// another namespace, does not change the host: its paths on the host are
// not served (404), since serving them would not give the access control
// they ask for. A host that is not served over HTTPS with its own
// certificate cannot ask for a certificate: the paths of every object that
// asks for one there are not served. An object left with no path served
// counts as not served.
func (e *engine) mergeClientAuth() {
	blocked := map[*Contribution]bool{}
	for _, c := range e.byAge {
		if c.Refused || isCanary(c) || c.Settings.ClientAuth == nil {
			continue
		}
		for _, r := range c.Rules {
			if h := e.model.Hosts[r.Host]; h != nil && e.allowed(c, r.Host) && !e.clientAuthHost(c, h) {
				unserve(h, c)
				blocked[c] = true
			}
		}
	}
	if len(blocked) == 0 {
		return
	}
	for _, h := range e.model.Hosts {
		for _, r := range h.Routes {
			if r.Backend != nil {
				delete(blocked, r.Origin)
			}
		}
	}
	for c := range blocked {
		e.model.Unserved[c] = true
	}
}

// clientAuthHost applies c's client certificate authentication to h, or
// reports why c's paths there are not served and returns false.
func (e *engine) clientAuthHost(c *Contribution, h *Host) bool {
	own := c.Settings.ClientAuth
	switch {
	case c.Origin.Namespace != h.Owner.Origin.Namespace:
		e.note(c, PathConflict, "auth-tls-* of %s can only be set by namespace %s, which owns it (its oldest object is %s); the paths of this object for it are not served",
			hostPhrase(h.Name), h.Owner.Origin.Namespace, h.Owner.Origin)
	case h.ClientAuthOwner == c, h.ClientAuth.Equal(own):
		return true // a second rule of the object, or the host's settings
	case h.ClientAuth != nil:
		e.note(c, PathConflict, "host %s already asks for client certificates with the auth-tls-* settings of %s, which is older, and this object's differ; its paths for the host are not served",
			Quote(h.Name), h.ClientAuthOwner.Origin)
	case !h.TLS || h.Cert == nil || h.Name == "":
		e.note(c, TLSSecret, "auth-tls-* needs %s to be served over HTTPS with a certificate of its own (a tls entry with a usable Secret), and it is not; the paths of this object for it are not served",
			hostPhrase(h.Name))
	default:
		h.ClientAuth, h.ClientAuthOwner = own, c
		return true
	}
	return false
}

// unserve makes c's routes on h answer 404.
func unserve(h *Host, c *Contribution) {
	for _, r := range h.Routes {
		if r.Origin == c {
			r.Backend = nil
		}
	}
}

// clientAuth renders a host's client certificate authentication, its CA
// bundle and revocation lists as generated files.
func (r *rendering) clientAuth(a *ClientAuth) *config.ClientAuth {
	out := &config.ClientAuth{
		CAFile:          r.file(a.CA, ".ca.pem"),
		Verify:          a.Verify,
		VerifyDepth:     a.Depth,
		PassCertificate: a.PassCertificate,
		ErrorPage:       a.ErrorPage,
		SubjectRegex:    a.SubjectRegex,
	}
	if a.CRL != nil {
		out.CRLFile = r.file(a.CRL, ".crl")
	}
	return out
}
