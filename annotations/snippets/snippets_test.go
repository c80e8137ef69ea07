package snippets_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

const (
	p    = registry.Prefix
	conf = p + "configuration-snippet"
	srv  = p + "server-snippet"
	// content is a typical snippet without access control; its marker
	// must never reach a finding.
	content = "more_set_headers \"X-Marker: SecretMarker\";\r\n\tlocation /internal {\n\t\tproxy_set_header X-Secret SecretMarker;\n\t}\n"
	ignored = " is not interpreted: Ramjet builds its configuration from typed fields and never pastes annotation text into it; the snippet is ignored"
	served  = " and does not keep the object from being served"
	access  = "UnsupportedAccessControl: " // a finding that refuses the object
	notRead = "; Ramjet never interprets snippets, so it cannot honour it, and the object is not served, so that its backend is not exposed unprotected"
)

func TestApply(t *testing.T) {
	tests := []struct {
		name        string
		spec        string
		annotations map[string]string
		refused     bool
		findings    []string // substrings of the findings, in order
	}{
		{"configuration-snippet over several lines", "all", map[string]string{conf: content}, false,
			[]string{"SnippetIgnored: " + conf + ignored + served}},
		{"server-snippet", "all", map[string]string{srv: content}, false,
			[]string{"SnippetIgnored: " + srv + ignored + served}},
		{"stream-snippet", "all", map[string]string{p + "stream-snippet": "server { listen 9000; proxy_pass SecretMarker:9000; }"}, false,
			[]string{"SnippetIgnored: " + p + "stream-snippet" + ignored + served}},
		{"auth-snippet", "all", map[string]string{p + "auth-snippet": content}, false,
			[]string{"SnippetIgnored: " + p + "auth-snippet" + ignored + " (it only applies to auth-url, which the object does not have)" + served}},
		{"empty snippet", "all", map[string]string{conf: ""}, false, []string{"SnippetIgnored: " + conf + ignored}},
		{"one finding per snippet, in key order", "all",
			map[string]string{srv: content, conf: content, p + "stream-snippet": content}, false,
			[]string{conf + ignored, srv + ignored, p + "stream-snippet" + ignored}},

		// The cases: access control written in a snippet.
		{"deny all", "all", map[string]string{conf: "deny all;"}, true,
			[]string{access + conf + ` holds access control: "deny" (line 1)` + notRead + " (Ramjet serves allowlist-source-range and denylist-source-range for client addresses)"}},
		{"allow and deny", "all", map[string]string{conf: "allow 10.0.0.0/8; deny all;"}, true,
			[]string{access + conf + ` holds access control: "allow" (line 1), "deny" (line 1)`}},
		{"access_by_lua_block", "all", map[string]string{conf: "access_by_lua_block { ngx.exit(403) }"}, true,
			[]string{access + conf + ` holds access control: "access_by_lua_block" (line 1)` + notRead}},
		{"auth_request", "all", map[string]string{conf: "auth_request /auth;"}, true,
			[]string{access + conf + ` holds access control: "auth_request" (line 1)`}},
		{"a location of server-snippet", "all", map[string]string{srv: "location /admin { deny all; }"}, true,
			[]string{access + srv + ` holds access control: "deny" (line 1)`}},

		// Nested blocks, and what counts.
		{"if block with return 403, lines counted", "all", map[string]string{conf: "more_set_headers \"X: 1\";\nif ($remote_addr != \"192.0.2.1\") {\n  return 403;\n}\n"}, true,
			[]string{`holds access control: "return 403" (line 3)`}},
		{"nested locations", "all", map[string]string{srv: "location /a {\n  location /a/b {\n    auth_basic \"Admin\";\n    auth_basic_user_file /etc/htpasswd;\n  }\n}"}, true,
			[]string{`"auth_basic" (line 3), "auth_basic_user_file" (line 4)` + notRead + " (Ramjet serves basic authentication with auth-type: basic and auth-secret)"}},
		{"deny then return 404, as real Ingresses hide metrics", "all", map[string]string{srv: "server_tokens off;\nlocation ~ ^/(ping|ready|prometheus) {\n  deny all;\n  return 404;\n}\n"}, true,
			[]string{`"deny" (line 3), "return 404" (line 4)`}},
		{"return 404 alone", "all", map[string]string{srv: "location = /metrics { return 404; }"}, true, []string{`"return 404" (line 1)`}},
		{"return 444", "all", map[string]string{conf: "if ($http_user_agent ~* bot) { return 444; }"}, true, []string{`"return 444"`}},
		{"return 503", "all", map[string]string{conf: "return 503;"}, true, []string{`"return 503"`}},
		{"return 401 with a body", "all", map[string]string{conf: `return 401 "no";`}, true, []string{`"return 401"`}},
		{"limit_except holds deny", "all", map[string]string{conf: "limit_except GET { deny all; }"}, true,
			[]string{`"limit_except" (line 1), "deny" (line 1)`}},
		{"internal", "all", map[string]string{srv: "location /private { internal; }"}, true, []string{`"internal" (line 1)`}},
		{"include: a file Ramjet cannot see", "all", map[string]string{srv: "include /etc/nginx/acl.conf;"}, true, []string{`"include" (line 1)`}},
		{"satisfy any", "all", map[string]string{conf: "satisfy any;"}, true, []string{`"satisfy" (line 1)`}},
		{"auth_jwt", "all", map[string]string{conf: "auth_jwt \"api\";"}, true, []string{`"auth_jwt" (line 1)`}},
		{"auth_digest", "all", map[string]string{conf: "auth_digest \"realm\";"}, true, []string{`"auth_digest" (line 1)`}},
		{"ssl_verify_client", "all", map[string]string{srv: "ssl_verify_client on;"}, true, []string{`"ssl_verify_client" (line 1)`}},
		{"secure_link", "all", map[string]string{conf: "secure_link $arg_md5,$arg_expires;"}, true, []string{`"secure_link" (line 1)`}},
		{"ModSecurity rules", "all", map[string]string{conf: "modsecurity_rules '\n  SecRuleEngine On\n';"}, true, []string{`"modsecurity_rules" (line 1)`}},
		{"rewrite_by_lua_file", "all", map[string]string{conf: "rewrite_by_lua_file /etc/nginx/lua/check.lua;"}, true, []string{`"rewrite_by_lua_file"`}},
		{"content_by_lua", "all", map[string]string{srv: "location /x { content_by_lua 'ngx.exit(401)'; }"}, true, []string{`"content_by_lua"`}},
		{"header_filter_by_lua_block can change the answer", "all", map[string]string{conf: "header_filter_by_lua_block { ngx.status = 403 }"}, true,
			[]string{`"header_filter_by_lua_block"`}},
		{"upper case is no disguise", "all", map[string]string{conf: "DENY all;"}, true, []string{`"deny" (line 1)`}},
		{"a quoted directive name is the directive", "all", map[string]string{conf: `"deny" all;`}, true, []string{`"deny" (line 1)`}},
		{"each directive named once, at most five", "all", map[string]string{conf: "allow 10.0.0.1; allow 10.0.0.2; deny all;\nauth_basic x; auth_basic_user_file y; auth_request /a; satisfy any; internal;"}, true,
			[]string{`"allow" (line 1), "deny" (line 1), "auth_basic" (line 2), "auth_basic_user_file" (line 2), "auth_request" (line 2), and 2 more` + notRead +
				" (Ramjet serves allowlist-source-range, denylist-source-range and auth-type: basic)"}},

		// What does not count.
		{"redirects and headers are no access control", "all", map[string]string{srv: "if ($host = 'old.example.com') {\n  return 301 https://new.example.com$request_uri;\n}\nreturn 302 /login;\nmore_set_headers \"X-Frame-Options: DENY\";\nreturn 200 \"ok\";\nreturn https://example.com/;\n"}, false,
			[]string{"SnippetIgnored: " + srv + ignored}},
		{"auth_basic off and auth_request_set", "all", map[string]string{srv: "location = /.well-known/security.txt {\n  auth_basic off;\n  return 301 https://example.com/security.txt;\n}\n", conf: "auth_request_set $token $upstream_http_x_token;\nauth_request off;"}, false,
			[]string{"SnippetIgnored: " + conf, "SnippetIgnored: " + srv}},
		{"satisfy all, modsecurity off, ssl_verify_client off", "all", map[string]string{conf: "satisfy all; modsecurity off;", srv: "ssl_verify_client off;"}, false,
			[]string{"SnippetIgnored: " + conf, "SnippetIgnored: " + srv}},
		{"log_by_lua and set_by_lua cannot deny", "all", map[string]string{conf: "set_by_lua_block $x { return \"}\" }\nlog_by_lua_block { ngx.log(ngx.ERR, \"deny all;\") }\nset_by_lua $y 'return 1';"}, false,
			[]string{"SnippetIgnored: " + conf}},
		{"access_log is not access control", "all", map[string]string{conf: "access_log off;"}, false, []string{"SnippetIgnored: " + conf}},
		{"a comment fakes nothing", "all", map[string]string{conf: "# deny all;\nmore_set_headers \"X: 1\"; # return 403;\n"}, false, []string{"SnippetIgnored: " + conf}},
		{"a quoted string fakes nothing", "all", map[string]string{conf: `more_set_headers "X-Note: deny all; return 403;"; add_header X-Other 'allow 1.2.3.4;';`}, false,
			[]string{"SnippetIgnored: " + conf}},
		{"an escaped quote keeps the string open", "all", map[string]string{conf: `add_header X "a\"; deny all; b";`}, false, []string{"SnippetIgnored: " + conf}},
		{"a custom 403 page in a named location only error_page enters", "all", map[string]string{srv: "location @custom_403 {\n  return 403 \"<html>You are not authorised</html>\";\n}\nerror_page 403 @custom_403;\n"}, false,
			[]string{"SnippetIgnored: " + srv}},
		{"stream-snippet is not read", "all", map[string]string{p + "stream-snippet": "server { listen 9000; deny all; }"}, false, []string{"SnippetIgnored: " + p + "stream-snippet"}},
		{"auth-snippet is not read", "all", map[string]string{p + "auth-snippet": "deny all;"}, false, []string{"SnippetIgnored: " + p + "auth-snippet"}},

		// Comments, quotes and blocks do not hide one.
		{"a # inside quotes starts no comment", "all", map[string]string{conf: `more_set_headers "X: #"; deny all;`}, true, []string{`"deny" (line 1)`}},
		{"a # inside a word starts no comment", "all", map[string]string{conf: "add_header X a#b; deny all;"}, true, []string{`"deny" (line 1)`}},
		{"an escaped backslash closes the string", "all", map[string]string{conf: `add_header X "a\\"; deny all;`}, true, []string{`"deny" (line 1)`}},
		{"a comment ends at the line's end", "all", map[string]string{conf: "# a comment\r deny all; still the comment\nreturn 403;"}, true, []string{`"return 403" (line 2)`}},
		{"${var} opens no block", "all", map[string]string{conf: "set $a ${b}; deny all;"}, true, []string{`"deny" (line 1)`}},
		{"a brace in a Lua string ends no block", "all", map[string]string{conf: "log_by_lua_block { ngx.log(ngx.ERR, \"}\") }\ndeny all;"}, true, []string{`"deny" (line 2)`}},
		{"a brace in a Lua comment ends no block", "all", map[string]string{conf: "log_by_lua_block { -- }\n}\ndeny all;"}, true, []string{`"deny" (line 3)`}},
		{"a brace in a Lua long string ends no block", "all", map[string]string{conf: "log_by_lua_block { local s = [==[ } ]] ]==] }\ndeny all;"}, true, []string{`"deny" (line 2)`}},
		{"a named location another snippet enters", "all", map[string]string{srv: "location @deny { return 403; }", conf: "try_files $uri @deny;"}, true,
			[]string{access + srv + ` holds access control: "return 403" (line 1)`, "SnippetIgnored: " + conf}},

		// Snippets that cannot be read.
		{"an unclosed block", "all", map[string]string{conf: "location /a { more_set_headers \"X: 1\";"}, true,
			[]string{"InvalidAnnotation: " + conf + ": it cannot be read as nginx configuration (line 1: a block is not closed with }), so Ramjet cannot tell whether it holds access control; the object is not served"}},
		{"an unclosed block holding deny", "all", map[string]string{conf: "location /a { deny all;"}, true, []string{access + conf + ` holds access control: "deny" (line 1)`}},
		{"an unterminated quote", "all", map[string]string{srv: "more_set_headers \"X: 1;\n"}, true, []string{"InvalidAnnotation: " + srv + ": it cannot be read as nginx configuration (line 2: the snippet ends within a directive (no ; or {))"}},
		{"a stray brace", "all", map[string]string{conf: "more_set_headers x; }"}, true, []string{"(line 1: } closes no block)"}},
		{"no semicolon", "all", map[string]string{conf: "more_set_headers x"}, true, []string{"the snippet ends within a directive"}},
		{"an unclosed Lua block", "all", map[string]string{conf: "log_by_lua_block { ngx.log(1)"}, true, []string{"(line 1: a Lua block is not closed with })"}},
		{"a word right after a quote", "all", map[string]string{conf: `add_header "X"Y 1;`}, true, []string{`unexpected 'Y' after a quoted word`}},
		{"a snippet with a NUL is refused: it cannot be read", "all", map[string]string{srv: "SecretMarker\x00"}, true,
			[]string{"InvalidAnnotation: " + srv + ": the value holds control characters; the object is not served"}},
		{"a snippet over 4096 bytes is refused: it cannot be read", "all", map[string]string{srv: strings.Repeat("more_set_headers SecretMarker;\n", 200)}, true,
			[]string{"InvalidAnnotation: " + srv + ": the value is longer than 4096 bytes; the object is not served"}},

		{"auth-snippet beside auth-url: the object is refused for it", "all",
			map[string]string{p + "auth-snippet": content, p + "auth-url": "http://auth/"}, true,
			[]string{"UnsupportedAccessControl: " + p + "auth-snippet configures the subrequest of " + p + "auth-url, whose answer decides access"}},
		{"auth-snippet beside an invalid auth-url: refused too", "all",
			map[string]string{p + "auth-snippet": content, p + "auth-url": "ftp://auth/"}, true,
			[]string{"InvalidAnnotation: " + p + "auth-url", "UnsupportedAccessControl: " + p + "auth-snippet configures the subrequest"}},
		{"modsecurity-snippet without enable-modsecurity is refused by the modsecurity family", "all", map[string]string{p + "modsecurity-snippet": "SecRuleEngine On"}, true,
			[]string{"UnsupportedAccessControl: " + p + "modsecurity-snippet configures ModSecurity, which only " + p + `enable-modsecurity: "true" turns on`}},
		{"disabled family: not served, since no snippet is read", "all,-snippets", map[string]string{srv: content}, true,
			[]string{"UnsupportedAccessControl: " + srv + " belongs to the access-control family snippets, which is disabled (--annotations); the object is not served"}},
	}
	origin := core.Origin{Kind: "Ingress", Namespace: "shop", Name: "web", Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := registry.Select(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			out := registry.Apply(sel, origin, tc.annotations, nil)
			if out.Refused != tc.refused {
				t.Errorf("refused %t, want %t", out.Refused, tc.refused)
			}
			s := out.Settings
			s.Policies.ExternalAuth, s.Protected = nil, false // auth-url's own
			if !reflect.DeepEqual(s, core.Settings{}) {
				t.Errorf("a snippet changed the settings: %+v", out.Settings)
			}
			if len(out.Findings) != len(tc.findings) {
				t.Errorf("%d findings, want %d: %v", len(out.Findings), len(tc.findings), out.Findings)
			}
			for i, f := range out.Findings {
				line := string(f.Reason) + ": " + f.Message
				if i < len(tc.findings) && !strings.Contains(line, tc.findings[i]) {
					t.Errorf("finding %d:\n%s\nwant it to contain\n%s", i, line, tc.findings[i])
				}
				if strings.Contains(line, "SecretMarker") || strings.Contains(line, "more_set_headers") || strings.Contains(line, "192.0.2.1") {
					t.Errorf("finding %d quotes the snippet: %s", i, line)
				}
			}
		})
	}
}
