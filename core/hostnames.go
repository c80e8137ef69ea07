package core

import (
	"slices"
	"strings"

	"github.com/ramjet-dev/ramjet/dataplane/certs"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// mergeHostNames gives hosts the names they serve besides their own: the
// aliases of server-alias, then the www. twins of from-to-www-redirect.
// Neither ever takes a name from anyone: a name that is a host (of the
// model, or of a Gateway API route on a shared listener), that an alias
// already took, or that falls under another namespace's wildcard host is
// skipped with a finding. Hosts are visited oldest owner first, so the
// oldest host gets a name two hosts ask for.
func (e *engine) mergeHostNames() {
	taken := map[string]string{} // name → what holds it, for findings
	for name := range e.model.Hosts {
		taken[name] = "already a host"
	}
	for _, t := range e.model.scoped {
		if e.model.listeners[t.key.listener] == nil {
			taken[t.key.host] = "a host of a Gateway API route"
		}
	}
	for _, c := range e.claims[""] {
		if !hasRule(c, "") {
			continue // a default backend alone
		}
		if len(c.Settings.Aliases) > 0 {
			e.note(c, InvalidAnnotation, "server-alias is ignored for the catch-all host (rules without a host): it already serves every name no host has")
		}
		if c.Settings.WWWRedirect {
			e.note(c, InvalidAnnotation, "from-to-www-redirect is ignored for the catch-all host (rules without a host): it has no name to redirect")
		}
	}
	hosts := e.hostsByOwnerAge()
	for _, h := range hosts {
		e.mergeAliases(h, taken)
	}
	for _, h := range hosts {
		e.mergeWWW(h, taken)
	}
}

// hostsByOwnerAge lists the model's hosts, the catch-all aside, oldest
// owner first, then by name.
func (e *engine) hostsByOwnerAge() []*Host {
	var hosts []*Host
	for name, h := range e.model.Hosts {
		if name != "" && h.Owner != nil {
			hosts = append(hosts, h)
		}
	}
	slices.SortFunc(hosts, func(a, b *Host) int {
		switch {
		case a.Owner != b.Owner && Older(a.Owner.Origin, b.Owner.Origin):
			return -1
		case a.Owner != b.Owner && Older(b.Owner.Origin, a.Owner.Origin):
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return hosts
}

// hostSetter returns the oldest served object of the owning namespace of
// host with a rule for it that asks for what wants says, noting the
// others that ask for it (key names the annotation, for findings).
func (e *engine) hostSetter(host, key string, wants func(*Contribution) bool) *Contribution {
	var setter *Contribution
	owner := e.owners[host].Origin.Namespace
	for _, c := range e.claims[host] {
		switch {
		case c.Refused || !wants(c):
		case c.Origin.Namespace != owner:
			e.note(c, PathConflict, "%s is ignored for %s: it belongs to namespace %s, which decides it", key, hostPhrase(host), owner)
		case setter == nil:
			setter = c
		default:
			e.note(c, InvalidAnnotation, "%s is ignored for host %s: %s, which is older, sets it for the host", key, Quote(host), setter.Origin)
		}
	}
	return setter
}

// mergeAliases gives a host the aliases of its oldest owning object that
// sets server-alias, as ingress-nginx takes those of the first Ingress of
// the server that has any.
func (e *engine) mergeAliases(h *Host, taken map[string]string) {
	c := e.hostSetter(h.Name, "server-alias", func(c *Contribution) bool { return len(c.Settings.Aliases) > 0 })
	if c == nil {
		return
	}
	h.AliasOwner = c
	for _, alias := range c.Settings.Aliases {
		if why := e.nameProblem(c, h.Name, alias, taken); why != "" {
			e.note(c, PathConflict, "server-alias %s of host %s is not served: %s", Quote(alias), Quote(h.Name), why)
			continue
		}
		if h.ClientAuth != nil && h.Cert != nil && certs.Covers(h.Cert.Parsed, alias) != nil {
			// Another application would not ask for the host's client
			// certificates: fail closed.
			e.note(c, TLSSecret, "server-alias %s of host %s is not served: the host asks for client certificates and its certificate does not cover the alias", Quote(alias), Quote(h.Name))
			continue
		}
		taken[alias] = "an alias of host " + Quote(h.Name)
		if e.defaultCertFor(c, h, alias, "server-alias "+Quote(alias)) {
			h.DefaultCertAliases = append(h.DefaultCertAliases, alias)
			continue
		}
		h.Aliases = append(h.Aliases, alias)
	}
}

// defaultCertFor reports whether name, served for h, needs the default
// certificate: h has a certificate that does not cover it. It notes it.
func (e *engine) defaultCertFor(c *Contribution, h *Host, name, what string) bool {
	if h.Cert == nil || certs.Covers(h.Cert.Parsed, name) == nil {
		return false
	}
	e.note(c, TLSSecret, "%s: the certificate of host %s does not cover it; it is served over HTTPS with the default certificate, as ingress-nginx does", what, Quote(h.Name))
	return true
}

// nameProblem says why name cannot be served for host on behalf of c, ""
// when it can.
func (e *engine) nameProblem(c *Contribution, host, name string, taken map[string]string) string {
	if name == host {
		return "it is the host itself"
	}
	if holder := taken[name]; holder != "" {
		return "it is " + holder
	}
	if w := wildcardOf(name); w != "" {
		if o := e.owners[w]; o != nil && o.Origin.Namespace != c.Origin.Namespace {
			return "it falls under host " + Quote(w) + ", which belongs to namespace " + o.Origin.Namespace
		}
	}
	return ""
}

// mergeWWW gives a host the www. twin that redirects to it when its oldest
// owning object asks for from-to-www-redirect, unless the twin is taken, as
// ingress-nginx skips the redirect when a server has the twin's name.
func (e *engine) mergeWWW(h *Host, taken map[string]string) {
	c := e.hostSetter(h.Name, "from-to-www-redirect", func(c *Contribution) bool { return c.Settings.WWWRedirect })
	if c == nil {
		return
	}
	if strings.HasPrefix(h.Name, "*.") {
		e.note(c, InvalidAnnotation, "from-to-www-redirect is ignored for wildcard host %s: it has no www. twin", Quote(h.Name))
		return
	}
	from := wwwTwin(h.Name)
	if config.ValidateDomain(from) != nil {
		e.note(c, InvalidAnnotation, "from-to-www-redirect is ignored for host %s: its twin %s is not a domain name", Quote(h.Name), Quote(from))
		return
	}
	if why := e.nameProblem(c, h.Name, from, taken); why != "" {
		e.note(c, PathConflict, "from-to-www-redirect of host %s: %s is not redirected: %s", Quote(h.Name), Quote(from), why)
		return
	}
	taken[from] = "redirected to host " + Quote(h.Name)
	h.WWWFrom, h.WWWOwner = from, c
	e.defaultCertFor(c, h, from, "from-to-www-redirect from "+Quote(from))
}

// wwwTwin is example.com for www.example.com and www.example.com for
// example.com.
func wwwTwin(host string) string {
	if rest, ok := strings.CutPrefix(host, "www."); ok {
		return rest
	}
	return "www." + host
}
