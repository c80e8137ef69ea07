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
		// \pL matches ~700 ranges; 400 of them compile to ~2 MB.
		{"program over 1 MiB", `\pL{400}`, "more than the limit of 1048576"},
		{"program over 1 MiB in a short expression", `[\pL\pN]{200}[\pL\pN]{200}`, "more than the limit of 1048576"},
		{"program over 512 instructions", `a{600}`, "instructions, more than the limit of 512"},
		{"program over 512 instructions in nested repeats", `(a{30}){20}`, "instructions, more than the limit of 512"},
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
	t.Run("a literal path of 500 bytes", func(t *testing.T) {
		expr := "/" + strings.Repeat("a", 499)
		re, err := config.CompilePathRegex(expr)
		if err != nil || !re.MatchString(expr) {
			t.Errorf("CompilePathRegex(500 bytes): got %v, want a regex matching the path", err)
		}
	})
	t.Run("512 instructions", func(t *testing.T) {
		if _, err := config.CompilePathRegex(`/.{0,254}`); err != nil {
			t.Errorf("CompilePathRegex(/.{0,254}): got %v, want no error (512 instructions)", err)
		}
		_, err := config.CompilePathRegex(`/.{0,254}x`)
		if err == nil || err.Error() != "compiles to 513 instructions, more than the limit of 512" {
			t.Errorf(`CompilePathRegex(/.{0,254}x): got %v, want "compiles to 513 instructions, more than the limit of 512"`, err)
		}
	})
	t.Run("just under 1 MiB", func(t *testing.T) {
		if _, err := config.CompilePathRegex(`\pL{190}`); err != nil {
			t.Errorf(`CompilePathRegex(\pL{190}): got %v, want no error`, err)
		}
	})
	t.Run("size in the message", func(t *testing.T) {
		_, err := config.CompilePathRegex(`\pL{400}`)
		if err == nil || !strings.HasPrefix(err.Error(), "compiles to ") || !strings.HasSuffix(err.Error(), " bytes, more than the limit of 1048576") {
			t.Errorf(`CompilePathRegex(\pL{400}): got %v, want "compiles to N bytes, more than the limit of %d"`, err, config.MaxRegexProgramBytes)
		}
	})
}

// TestRegexSize checks the instructions a match's regexes count: path,
// header and cookie regexes together, as each is wrapped, and that their
// bytes are the instructions' and the character classes'.
func TestRegexSize(t *testing.T) {
	tests := []struct {
		name  string
		match config.Match
		want  int
	}{
		{"prefix path", config.Match{Path: config.PathMatch{Prefix: "/api"}}, 0},
		{"exact path with an exact header", config.Match{Path: config.PathMatch{Exact: "/a"}, Headers: []config.HeaderMatch{{Name: "X", Exact: "1"}}}, 0},
		{"path regex", config.Match{Path: config.PathMatch{Regex: "/a(/|$)(.*)"}}, 14},
		{"path, header and cookie regexes", config.Match{
			Path:    config.PathMatch{Regex: "/a"},
			Headers: []config.HeaderMatch{{Name: "X", Regex: "v[0-9]"}},
			Cookies: []config.CookieMatch{{Name: "c", Regex: "on"}},
		}, 5 + 6 + 6},
		{"invalid regex counts nothing", config.Match{Path: config.PathMatch{Regex: "/a("}}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.match.RegexSize()
			if got.Instructions != tc.want {
				t.Errorf("RegexSize: got %d instructions, want %d", got.Instructions, tc.want)
			}
			if got.Bytes < 40*tc.want || (tc.want == 0) != (got.Bytes == 0) {
				t.Errorf("RegexSize: got %d bytes for %d instructions, want at least 40 each", got.Bytes, got.Instructions)
			}
		})
	}
	t.Run("a large class takes bytes, not instructions", func(t *testing.T) {
		small := (&config.Match{Path: config.PathMatch{Regex: "/a"}}).RegexSize()
		large := (&config.Match{Path: config.PathMatch{Regex: `/\pL`}}).RegexSize()
		if large.Instructions != small.Instructions || large.Bytes < small.Bytes+4000 {
			t.Errorf(`RegexSize: /a %+v, /\pL %+v; want the same instructions and \pL's ranges in bytes`, small, large)
		}
	})
}

// TestRegexInstructionBudget checks the instructions an application may
// hold under max_regex_input_bytes: the work budget over the bound.
func TestRegexInstructionBudget(t *testing.T) {
	tests := []struct {
		input config.ByteSize
		want  int
	}{
		{0, 512},
		{8 << 10, 512},
		{1 << 10, 4096},
		{64 << 10, 64},
		{1 << 20, 4},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.input), func(t *testing.T) {
			lim := config.Limits{MaxRegexInputBytes: tc.input}
			if got := lim.RegexInstructionBudget(); got != tc.want {
				t.Errorf("RegexInstructionBudget with max_regex_input_bytes %d: got %d, want %d", tc.input, got, tc.want)
			}
		})
	}
}
