// Package snippets is the snippets family: configuration-snippet,
// server-snippet, stream-snippet and auth-snippet, ingress-nginx's way of
// pasting raw nginx configuration. Ramjet builds its configuration from
// typed fields only, so a snippet is never interpreted, and it is read only
// to find access control: a configuration-snippet or server-snippet that
// denies or authenticates requests (allow, deny, auth_basic, return 403,
// Lua code, ...) makes the object not served (UnsupportedAccessControl),
// since serving it without the control would expose what its owner
// protected; so does an auth-snippet beside auth-url, which configures the
// subrequest that decides access. Any other snippet gets a SnippetIgnored finding, and the
// object is served without it. Snippets are usually several lines long, so
// their keys take line breaks; their content never appears in a finding.
//
// The family fails closed: a snippet that cannot be read (as nginx reads
// configuration text, or over the value limits) or the family being
// disabled makes the object not served, since Ramjet could not tell
// whether it holds access control.
package snippets

import (
	"fmt"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

// notInterpreted is what every snippet key's Differs starts with.
const notInterpreted = "ingress-nginx pastes the snippet into nginx.conf when allow-snippet-annotations is true and " +
	"annotations-risk-level is Critical; with its defaults it drops the snippet (v1.9 to v1.11) or does not serve the object (since v1.12). " +
	"Ramjet never interprets it and serves the object without it, with a SnippetIgnored finding"

// accessDoc is the Differs of the snippets Ramjet reads for access control.
const accessDoc = notInterpreted + ", unless it holds access control, which makes the object not served (UnsupportedAccessControl), as every access control Ramjet cannot honour: " +
	"allow, deny, satisfy (but satisfy all), limit_except, internal, every auth_* directive (auth_basic, auth_basic_user_file, auth_request, auth_jwt, auth_digest, ...; " +
	"not auth_request_set, which only copies a value of the answer, nor the value off, which only lifts a control), " +
	"return with a status from 400 to 599 (return 403, return 404, return 444; not redirects such as return 301), " +
	"Lua code that can end a request or change its answer (every *_by_lua, *_by_lua_block and *_by_lua_file but log_by_lua* and set_by_lua*), " +
	"ModSecurity (modsecurity*, but modsecurity off), ssl_verify_client (but off), secure_link* and include (a file Ramjet cannot see). " +
	"They count in nested blocks (location, if) too; comments and quoted strings neither hide nor fake one; " +
	"the body of a named location (location @name) that only error_page enters (a custom error page) does not count. " +
	"A snippet that cannot be read as nginx configuration (unbalanced braces or quotes), or whose value is invalid, also makes the object not served."

func init() {
	registry.Register(&registry.Family{
		Name: "snippets",
		Doc:  "Raw nginx configuration (snippets): never interpreted; SnippetIgnored, or not served when a snippet holds access control.",
		// A snippet Ramjet cannot read (or does not read, when the family
		// is disabled) may hold access control.
		AccessControl: true,
		Keys: []registry.Key{
			snippet("configuration-snippet", registry.ScopeIngress, "nginx directives for each location of the object: not interpreted; access control in it makes the object not served.", accessDoc),
			snippet("server-snippet", registry.ScopeHost, "nginx directives for the server block of the object's hosts: not interpreted; access control in it makes the object not served.",
				notInterpreted+", unless it holds access control, read as in configuration-snippet, which makes the object not served (UnsupportedAccessControl). "+
					"ingress-nginx uses the server-snippet of a host's oldest Ingress for the whole host; Ramjet refuses the object that carries it, whose paths answer 404."),
			snippet("stream-snippet", registry.ScopeIngress, "nginx directives for the stream (TCP/UDP) block: not interpreted.",
				notInterpreted+". It is not read for access control: it configures stream servers of their own ports, which Ramjet does not serve."),
			snippet(authSnippet, registry.ScopeIngress, "nginx directives for the external authentication location of auth-url: not interpreted; beside auth-url it makes the object not served.",
				notInterpreted+", unless the object has auth-url: the snippet then configures the subrequest whose answer decides access (a header the service checks, for example), "+
					"so the object is not served (UnsupportedAccessControl). Without auth-url it does nothing (in ingress-nginx too)."),
		},
		Parse: parse,
	})
}

func snippet(name string, scope registry.Scope, doc, differs string) registry.Key {
	return registry.Key{Name: name, Validate: registry.Any, MultiLine: true, Risk: registry.RiskCritical, Scope: scope,
		Doc: doc, Differs: differs}
}

// scanned are the keys read for access control.
var scanned = []string{"configuration-snippet", "server-snippet"}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	var keys []string
	var trees [][]*directive
	problems := map[string]error{}
	for _, k := range scanned {
		if v, ok := values[k]; ok {
			tree, err := parseConfig(v)
			keys, trees = append(keys, k), append(trees, tree)
			if err != nil {
				problems[k] = err
			}
		}
	}
	uses := accessUses(trees)
	refused := map[string]bool{}
	for i, k := range keys {
		switch {
		case len(uses[i]) > 0:
			ctx.Refuse(core.UnsupportedAccessControl, "%s%s holds access control: %s; Ramjet never interprets snippets, so it cannot honour it, and the object is not served, so that its backend is not exposed unprotected%s",
				registry.Prefix, k, describe(uses[i]), hint(uses[i]))
			refused[k] = true
		case problems[k] != nil:
			ctx.Invalid(k, "it cannot be read as nginx configuration (%v), so Ramjet cannot tell whether it holds access control", problems[k])
			refused[k] = true
		}
	}
	if _, ok := values[authSnippet]; ok && hasAuthURL(ctx) {
		ctx.Refuse(core.UnsupportedAccessControl, "%s%s configures the subrequest of %sauth-url, whose answer decides access: Ramjet never interprets snippets, so it cannot honour it, "+
			"and the object is not served, so that its backend is not exposed with another check than its owner wrote", registry.Prefix, authSnippet, registry.Prefix)
		refused[authSnippet] = true
	}
	for _, k := range registry.Present(values) {
		if refused[strings.TrimPrefix(k, registry.Prefix)] {
			continue
		}
		also := ""
		if k == registry.Prefix+authSnippet {
			also = " (it only applies to auth-url, which the object does not have)"
		}
		ctx.Note(core.SnippetIgnored, "%s is not interpreted: Ramjet builds its configuration from typed fields and never pastes annotation text into it; the snippet is ignored%s and does not keep the object from being served",
			k, also)
	}
	return nil
}

// authSnippet configures the subrequest of external authentication.
const authSnippet = "auth-snippet"

// hasAuthURL reports whether the object asks for external authentication,
// with a valid auth-url or one that was refused.
func hasAuthURL(ctx *registry.Context) bool {
	_, ok := ctx.Value("auth-url")
	return ok || ctx.Rejected("auth-url")
}

// maxNamed bounds the directives a finding names.
const maxNamed = 5

// describe names the access directives of a snippet, each once with the
// line it first appears on.
func describe(uses []use) string {
	var parts []string
	seen := map[string]bool{}
	for _, u := range uses {
		if !seen[u.label] {
			seen[u.label] = true
			parts = append(parts, fmt.Sprintf("%s (line %d)", core.Quote(u.label), u.line))
		}
	}
	if len(parts) > maxNamed {
		parts = append(parts[:maxNamed], fmt.Sprintf("and %d more", len(parts)-maxNamed))
	}
	return strings.Join(parts, ", ")
}

// hint points at the annotations Ramjet serves for the same control.
func hint(uses []use) string {
	var ranges, basic bool
	for _, u := range uses {
		ranges = ranges || u.label == "allow" || u.label == "deny"
		basic = basic || strings.HasPrefix(u.label, "auth_basic")
	}
	switch {
	case ranges && basic:
		return " (Ramjet serves allowlist-source-range, denylist-source-range and auth-type: basic)"
	case ranges:
		return " (Ramjet serves allowlist-source-range and denylist-source-range for client addresses)"
	case basic:
		return " (Ramjet serves basic authentication with auth-type: basic and auth-secret)"
	}
	return ""
}
