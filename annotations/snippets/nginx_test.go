package snippets

import (
	"fmt"
	"strings"
	"testing"
)

// TestParseConfig reads snippets as nginx reads configuration text: each
// case's directives are rendered as name[args]@line {block}. The cases
// agree with nginx 1.22's own reading (nginx -t with ngx_lua).
func TestParseConfig(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"directives and lines", "deny all;\n\nallow 10.0.0.0/8;", "deny[all]@1 allow[10.0.0.0/8]@3"},
		{"quotes are removed, escapes resolved", `add_header "X-A" 'b c' "d\"e" f\\g "h\ti";`, "add_header[X-A|b c|d\"e|f\\g|h\ti]@1"},
		{"an escaped quote keeps a string open", `add_header X "a\"; deny all; b";`, `add_header[X|a"; deny all; b]@1`},
		{"other backslashes stay", `rewrite ^/a\.b$ /c;`, `rewrite[^/a\.b$|/c]@1`},
		{"blocks nest", "location /a {\n  if ($x) {\n    return 403;\n  }\n}", "location[/a]@1 {if[($x)]@2 {return[403]@3}}"},
		{"a condition's parenthesis after a quote", `if ($a = "b") { return 403; }`, "if[($a|=|b|)]@1 {return[403]@1}"},
		{"comments", "# deny all;\nadd_header X a#b; # return 403;\n", "add_header[X|a#b]@2"},
		{"a comment ends at LF only", "# a\r deny all;\nreturn 403;", "return[403]@2"},
		{"${var} opens no block", "set $a ${b}; deny all;", "set[$a|${b}]@1 deny[all]@1"},
		{"a } inside a word is part of it", "add_header X a}b;", "add_header[X|a}b]@1"},
		{"a Lua block is skipped", "access_by_lua_block {\n  if x then ngx.exit(\"}\") end -- }\n  local s = [[ } ]]\n}\ndeny all;", "access_by_lua_block[]@1 deny[all]@5"},
		{"a Lua block's braces nest", "set_by_lua_block $x { local t = {a = 1} return t.a }\ndeny all;", "set_by_lua_block[$x]@1 deny[all]@2"},
		{"multi-line strings", "modsecurity_rules '\n  SecRuleEngine On\n';\ndeny all;", "modsecurity_rules[\n  SecRuleEngine On\n]@1 deny[all]@4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := parseConfig(tc.text)
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if got := render(ds); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func render(ds []*directive) string {
	var parts []string
	for _, d := range ds {
		s := fmt.Sprintf("%s[%s]@%d", d.name, strings.Join(d.args, "|"), d.line)
		if d.block != nil {
			s += " {" + render(d.block) + "}"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// TestParseConfigErrors refuses what nginx refuses to read, naming the line.
func TestParseConfigErrors(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"an unclosed block", "location /a {\n deny all;", "line 2: a block is not closed with }"},
		{"a stray brace", "deny all;\n}", "line 2: } closes no block"},
		{"no semicolon", "deny all", "line 1: the snippet ends within a directive (no ; or {)"},
		{"an unterminated quote", "add_header X \"a;\n", "line 2: the snippet ends within a directive (no ; or {)"},
		{"a word right after a quote", `add_header "X"Y 1;`, `line 1: unexpected 'Y' after a quoted word`},
		{"an empty directive", ";", `line 1: unexpected ';'`},
		{"an unclosed Lua block", "log_by_lua_block {\n ngx.log(1)", "line 2: a Lua block is not closed with }"},
		{"an unterminated Lua string", "log_by_lua_block { ngx.log(\"a) }", "line 1: a Lua block is not closed with } (a string does not end)"},
		{"a { inside a word", "add_header X a{b;", "line 1: a block is not closed with }"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseConfig(tc.text); err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// FuzzParseConfig checks that nothing a snippet holds hides a directive
// that follows it: whatever text reads without an error, a deny on a line
// after it is found (comments end at the line's end, strings and blocks are
// closed), and reading never panics.
func FuzzParseConfig(f *testing.F) {
	for _, seed := range []string{
		"", "deny all;", `add_header X "a\"; deny all; b";`, "# comment", "location /a { if ($x) { return 403; } }",
		"log_by_lua_block { local s = [==[ } ]==] -- }\n }", "set $a ${b};", `more_set_headers 'X: #';`,
		"location @page { return 403; }\nerror_page 403 @page;",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if _, err := parseConfig(text); err != nil {
			return
		}
		ds, err := parseConfig(text + "\ndeny all;")
		if err != nil {
			t.Fatalf("%q reads, but not with a deny after it: %v", text, err)
		}
		for _, u := range accessUses([][]*directive{ds})[0] {
			if u.label == "deny" && u.line == strings.Count(text, "\n")+2 {
				return
			}
		}
		t.Fatalf("%q hides the deny that follows it", text)
	})
}
