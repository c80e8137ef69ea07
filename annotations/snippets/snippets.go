// Package snippets is the snippets family: configuration-snippet,
// server-snippet, stream-snippet and auth-snippet, ingress-nginx's way of
// pasting raw nginx configuration. Ramjet builds its configuration from
// typed fields only, so a snippet is never interpreted: each one present
// gets a SnippetIgnored finding, and the object is still served (without
// it). Snippets are usually several lines long, so their keys take line
// breaks; their content never appears in a finding.
package snippets

import (
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

// notInterpreted is what every snippet key's Differs says.
const notInterpreted = "ingress-nginx pastes the snippet into nginx.conf when allow-snippet-annotations is true and " +
	"annotations-risk-level is Critical; with its defaults it drops the snippet (v1.9 to v1.11) or does not serve the object (since v1.12). " +
	"Ramjet never interprets it and serves the object without it, with a SnippetIgnored finding."

func init() {
	registry.Register(&registry.Family{
		Name: "snippets",
		Doc:  "Raw nginx configuration (snippets): never interpreted, reported with SnippetIgnored.",
		Keys: []registry.Key{
			snippet("configuration-snippet", registry.ScopeIngress, "nginx directives for each location of the object: not interpreted."),
			snippet("server-snippet", registry.ScopeHost, "nginx directives for the server block of the object's hosts: not interpreted."),
			snippet("stream-snippet", registry.ScopeIngress, "nginx directives for the stream (TCP/UDP) block: not interpreted."),
			snippet("auth-snippet", registry.ScopeIngress, "nginx directives for the external authentication location of auth-url (which Ramjet does not provide): not interpreted."),
		},
		Parse: parse,
	})
}

func snippet(name string, scope registry.Scope, doc string) registry.Key {
	return registry.Key{Name: name, Validate: registry.Any, MultiLine: true, Risk: registry.RiskCritical, Scope: scope,
		Doc: doc, Differs: notInterpreted}
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	for _, k := range registry.Present(values) {
		also := ""
		if k == registry.Prefix+"auth-snippet" {
			also = " (it would only apply to auth-url, which Ramjet does not provide)"
		}
		ctx.Note(core.SnippetIgnored, "%s is not interpreted: Ramjet builds its configuration from typed fields and never pastes annotation text into it; the snippet is ignored%s and does not keep the object from being served",
			k, also)
	}
	return nil
}
