package core

import (
	"strings"

	"github.com/ramjet-dev/ramjet/dataplane/certs"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// aliasDomains turns aliases into data plane domains: "*.example.com"
// matches names of one or more labels in nginx's server_name, which is the
// data plane's "**.example.com".
func aliasDomains(aliases []string) []string {
	out := make([]string, len(aliases))
	for i, a := range aliases {
		if rest, ok := strings.CutPrefix(a, "*."); ok {
			a = "**." + rest
		}
		out[i] = a
	}
	return out
}

// defaultCertAliases renders the aliases a host's certificate does not
// cover: an application of their own, the same as the host's (app, at
// fieldPath) but for its certificate, so that they are served with the
// default certificate, as ingress-nginx serves them. Its fields come from
// the same objects as the host's.
func (r *rendering) defaultCertAliases(h *Host, app *config.Application, fieldPath string) {
	if len(h.DefaultCertAliases) == 0 {
		return
	}
	name := AliasAppName(h.Name)
	if owner, ok := r.names.claim(name, "aliases of host "+h.Name); !ok {
		r.conflict(h.AliasOwner, "the aliases of host %s get the generated name %s, which %s already has; they are not served", Quote(h.Name), name, owner)
		return
	}
	cp := *app
	cp.Domains = aliasDomains(h.DefaultCertAliases)
	cp.TLS = nil
	copyPath := "tenants." + TenantName + ".applications." + name
	for field, objects := range r.sources {
		if rest, ok := strings.CutPrefix(field, fieldPath); ok && (rest == "" || rest[0] == '.') {
			for _, c := range objects {
				r.attribute(copyPath+rest, c)
			}
		}
	}
	r.attribute(copyPath+".domains", h.AliasOwner)
	r.tenant.Applications[name] = &cp
}

// wwwRedirect renders the redirect of a host's www. twin to the host: 308
// to the same scheme, the listener's port and the path and query less one
// trailing slash, on plain HTTP and HTTPS alike, as ingress-nginx's
// redirect server answers. Over HTTPS the twin gets the host's certificate
// when it covers the twin, else the default one.
func (r *rendering) wwwRedirect(h *Host) {
	if h.WWWFrom == "" {
		return
	}
	name := RedirectAppName(h.WWWFrom)
	if owner, ok := r.names.claim(name, "redirect of "+h.WWWFrom); !ok {
		r.conflict(h.WWWOwner, "the redirect of %s to host %s gets the generated name %s, which %s already has; it is not served", Quote(h.WWWFrom), Quote(h.Name), name, owner)
		return
	}
	app := &config.Application{
		Domains:   []string{h.WWWFrom},
		Listeners: r.baseListeners,
		DefaultRoute: &config.DefaultRoute{Action: config.Action{Redirect: &config.Redirect{
			Code: wwwRedirectCode, Hostname: h.Name, TrimTrailingSlash: true,
		}}},
	}
	if h.Cert != nil && certs.Covers(h.Cert.Parsed, h.WWWFrom) == nil {
		app.TLS = &config.CertificateFiles{CertFile: r.file(h.Cert.CertPEM, ".crt"), KeyFile: r.file(h.Cert.KeyPEM, ".key")}
	}
	r.attribute("tenants."+TenantName+".applications."+name, h.WWWOwner)
	r.tenant.Applications[name] = app
}

// wwwRedirectCode is the status of the www. redirect: ingress-nginx's
// http-redirect-code default.
const wwwRedirectCode = 308
