package config_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

func TestCompilePathRegex(t *testing.T) {
	tests := []struct {
		expr    string
		match   []string
		nomatch []string
	}{
		{
			// Every alternative is anchored at the start of the path.
			expr:    "/alpha|/beta",
			match:   []string{"/alpha", "/beta", "/beta/x", "/alphabet", "/ALPHA/x", "/Beta"},
			nomatch: []string{"/xbeta", "/x/beta", "x/alpha", "", "/"},
		},
		{
			expr:    `/api/v[0-9]+/`,
			match:   []string{"/api/v1/", "/api/v12/users", "/API/V2/"},
			nomatch: []string{"/api/vx/", "/x/api/v1/", "/api/v1"},
		},
		{
			expr:    `/img/.*\.(png|jpe?g)$`,
			match:   []string{"/img/a.png", "/IMG/b/c.JPEG", "/img/.jpg"},
			nomatch: []string{"/img/a.png/x", "/static/img/a.png", "/img/a.gif"},
		},
		{
			// A redundant anchor is harmless.
			expr:    "^/a",
			match:   []string{"/a", "/abc"},
			nomatch: []string{"/ba"},
		},
		{
			// Flags may be turned back off inside the expression.
			expr:    "(?-i)/Case",
			match:   []string{"/Case", "/Cases"},
			nomatch: []string{"/case", "/CASE"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			re, err := config.CompilePathRegex(tc.expr)
			if err != nil {
				t.Fatalf("CompilePathRegex(%q): got %v, want no error", tc.expr, err)
			}
			for _, p := range tc.match {
				if !re.MatchString(p) {
					t.Errorf("CompilePathRegex(%q) on %q: got no match, want a match", tc.expr, p)
				}
			}
			for _, p := range tc.nomatch {
				if re.MatchString(p) {
					t.Errorf("CompilePathRegex(%q) on %q: got a match, want none", tc.expr, p)
				}
			}
		})
	}
}

func TestCompileValueRegex(t *testing.T) {
	tests := []struct {
		expr    string
		match   []string
		nomatch []string
	}{
		{
			expr:    "v[0-9]+",
			match:   []string{"v1", "v123"},
			nomatch: []string{"xv1", "v1x", "V1", "v", ""},
		},
		{
			// Every alternative must match the whole value.
			expr:    "a|b",
			match:   []string{"a", "b"},
			nomatch: []string{"ab", "ba", "xa", "bx", ""},
		},
		{
			expr:    "",
			match:   []string{""},
			nomatch: []string{"x"},
		},
		{
			expr:  ".*",
			match: []string{"", "anything at all"},
		},
		{
			expr:    "(?i)prod",
			match:   []string{"prod", "PROD"},
			nomatch: []string{"production"},
		},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q", tc.expr), func(t *testing.T) {
			re, err := config.CompileValueRegex(tc.expr)
			if err != nil {
				t.Fatalf("CompileValueRegex(%q): got %v, want no error", tc.expr, err)
			}
			for _, v := range tc.match {
				if !re.MatchString(v) {
					t.Errorf("CompileValueRegex(%q) on %q: got no match, want a match", tc.expr, v)
				}
			}
			for _, v := range tc.nomatch {
				if re.MatchString(v) {
					t.Errorf("CompileValueRegex(%q) on %q: got a match, want none", tc.expr, v)
				}
			}
		})
	}
}

// TestCompileRegexErrors checks the expressions both compilers refuse.
func TestCompileRegexErrors(t *testing.T) {
	compilers := []struct {
		name    string
		compile func(string) (any, error)
	}{
		{"CompilePathRegex", func(s string) (any, error) { return config.CompilePathRegex(s) }},
		{"CompileValueRegex", func(s string) (any, error) { return config.CompileValueRegex(s) }},
	}
	tests := []struct {
		name, expr, phrase string
	}{
		{"missing )", "/a(", "invalid regular expression: missing closing )"},
		{"missing ]", "[a", "invalid regular expression: missing closing ]"},
		{"bad repeat", "a**", "invalid regular expression: invalid nested repetition operator"},
		{"repeat count over 1000", "a{1001}", "invalid regular expression: invalid repeat count"},
		{"nested repeats over 1000", "(a{100}){100}", "invalid regular expression: invalid repeat count"},
		{"bad escape", `\y`, "invalid regular expression: invalid escape sequence"},
		{"Perl lookahead", "a(?=b)", "invalid regular expression"},
		{"too long", strings.Repeat("a", 4097), "must be at most 4096 bytes"},
		// \pL matches ~700 ranges; a thousand of them compile to ~5 MB.
		{"program over 1 MiB", `\pL{1000}`, "more than the limit of 1048576"},
		{"program over 1 MiB in a short expression", `[\pL\pN]{500}[\pL\pN]{500}`, "more than the limit of 1048576"},
		// An unbalanced ")" closes the wrapper's group early: the rest would
		// be a new, unanchored alternative ("(?i)^(?:/a)|(?:/b)" matches
		// "/x/b"; "^(?:a)|(?:b)$" matches "a..."). Such an expression is
		// not valid on its own and must be refused.
		{"unbalanced ) escaping the wrapper", "/alpha)|(?:/beta", "invalid regular expression"},
		{"unbalanced ) escaping the wrapper, short", "a)|(b", "invalid regular expression"},
	}
	for _, c := range compilers {
		for _, tc := range tests {
			t.Run(c.name+"/"+tc.name, func(t *testing.T) {
				re, err := c.compile(tc.expr)
				if err == nil || !strings.Contains(err.Error(), tc.phrase) {
					t.Errorf("%s(%.60q): got %v, %v; want an error with %q", c.name, tc.expr, re, err, tc.phrase)
				}
			})
		}
	}
}

// TestCompileRegexLimits checks the edges of the size limits.
func TestCompileRegexLimits(t *testing.T) {
	t.Run("4096 bytes", func(t *testing.T) {
		expr := "/" + strings.Repeat("a", 4095)
		re, err := config.CompilePathRegex(expr)
		if err != nil || !re.MatchString(expr) {
			t.Errorf("CompilePathRegex(4096 bytes): got %v, want a regex matching the path", err)
		}
	})
	t.Run("just under 1 MiB", func(t *testing.T) {
		if _, err := config.CompilePathRegex(`\pL{190}`); err != nil {
			t.Errorf(`CompilePathRegex(\pL{190}): got %v, want no error`, err)
		}
	})
	t.Run("size in the message", func(t *testing.T) {
		_, err := config.CompilePathRegex(`\pL{1000}`)
		if err == nil || !strings.HasPrefix(err.Error(), "compiles to ") {
			t.Errorf(`CompilePathRegex(\pL{1000}): got %v, want "compiles to N bytes, more than the limit of %d"`, err, config.MaxRegexProgramBytes)
		}
	})
	t.Run("repeat limit within one level", func(t *testing.T) {
		if _, err := config.CompileValueRegex("a{1000}"); err != nil {
			t.Errorf("CompileValueRegex(a{1000}): got %v, want no error", err)
		}
	})
}
