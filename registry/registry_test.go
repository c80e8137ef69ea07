package registry

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/core"
)

// withRegistry runs f against an empty registry and restores the real one.
func withRegistry(t *testing.T, f func()) {
	t.Helper()
	mu.Lock()
	savedF, savedK, savedI := families, keys, inputs
	families, keys, inputs = map[string]*Family{}, map[string]*Family{}, map[string]*Input{}
	mu.Unlock()
	defer func() {
		mu.Lock()
		families, keys, inputs = savedF, savedK, savedI
		mu.Unlock()
	}()
	f()
}

func family(name string, access bool, keyNames ...string) *Family {
	f := &Family{Name: name, AccessControl: access, Parse: func(*Context, map[string]string) core.Fragment { return nil }}
	for _, k := range keyNames {
		wildcard := strings.HasSuffix(k, "-")
		f.Keys = append(f.Keys, Key{Name: k, Wildcard: wildcard})
	}
	return f
}

func TestRegisterPanics(t *testing.T) {
	cases := []struct {
		name  string
		setup func()
	}{
		{"empty name", func() { Register(family("", false, "a")) }},
		{"duplicate family", func() { Register(family("f", false, "a")); Register(family("f", false, "b")) }},
		{"no keys", func() { Register(family("f", false)) }},
		{"no parse", func() { Register(&Family{Name: "f", Keys: []Key{{Name: "a"}}}) }},
		{"key owned twice", func() { Register(family("f", false, "a")); Register(family("g", false, "a")) }},
		{"key under another's wildcard", func() { Register(family("f", false, "auth-tls-")); Register(family("g", false, "auth-tls-secret")) }},
		{"wildcard over another's key", func() { Register(family("f", false, "auth-tls-secret")); Register(family("g", false, "auth-")) }},
		{"wildcard over another's wildcard", func() { Register(family("f", false, "auth-tls-")); Register(family("g", false, "auth-")) }},
		{"duplicate input", func() { RegisterInput(&Input{Name: "in"}); RegisterInput(&Input{Name: "in"}) }},
		{"unnamed input", func() { RegisterInput(&Input{}) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			withRegistry(t, func() {
				defer func() {
					if recover() == nil {
						t.Error("no panic")
					}
				}()
				tc.setup()
			})
		})
	}
}

func TestSelect(t *testing.T) {
	withRegistry(t, func() {
		for _, f := range []*Family{family("cors", false, "enable-cors"), family("rewrite", false, "rewrite-target"), family("auth", true, "auth-type")} {
			Register(f)
		}
		cases := []struct {
			spec    string
			enabled []string
			err     string
		}{
			{"all", []string{"auth", "cors", "rewrite"}, ""},
			{"all,-cors", []string{"auth", "rewrite"}, ""},
			{"rewrite, cors", []string{"cors", "rewrite"}, ""},
			{"nope", nil, `"nope" is not a family`},
			{"cors,all", nil, `"all" is not a family ("all" must come first`},
		}
		for _, tc := range cases {
			sel, err := Select(tc.spec)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "auth, cors, rewrite") {
					t.Errorf("Select(%q): %v, want an error with %q listing the families", tc.spec, err, tc.err)
				}
				continue
			}
			var got []string
			for _, name := range []string{"auth", "cors", "rewrite"} {
				if sel.Enabled(name) {
					got = append(got, name)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.enabled, ",") {
				t.Errorf("Select(%q) enables %v, want %v", tc.spec, got, tc.enabled)
			}
		}
		RegisterInput(&Input{Name: "ingress"})
		RegisterInput(&Input{Name: "gateway-api"})
		if err := SelectInputs(map[string]bool{"ingress": false, "gateway-api": false}); err == nil {
			t.Error("no input enabled was accepted")
		}
		if err := SelectInputs(map[string]bool{"gateway-api": true}); err != nil {
			t.Error(err)
		}
	})
}

func TestApply(t *testing.T) {
	withRegistry(t, func() {
		var seen map[string]string
		cors := family("cors", false, "enable-cors", "cors-allow-origin")
		cors.Keys[0].Validate = func(v string) error {
			if v != "true" && v != "false" {
				return errBool
			}
			return nil
		}
		cors.Parse = func(ctx *Context, values map[string]string) core.Fragment {
			seen = values
			return func(s *core.Settings) { s.AppRoot = "/touched" }
		}
		Register(cors)
		snippets := family("snippets", false, "server-snippet")
		snippets.Keys[0].MultiLine = true
		Register(snippets)
		var ranges string
		sources := family("ranges", true, "allowlist-source-range")
		sources.Keys[0].List = true
		sources.Parse = func(ctx *Context, values map[string]string) core.Fragment {
			ranges = values["allowlist-source-range"]
			return nil
		}
		Register(sources)
		Register(family("auth", true, "auth-type"))
		Register(family("tls", true, "auth-tls-"))
		origin := core.Origin{Kind: "Ingress", Namespace: "ns", Name: "x", Created: time.Now()}
		cases := []struct {
			name        string
			spec        string
			annotations map[string]string
			refused     bool
			reasons     []core.Reason
			touched     bool
		}{
			{"valid", "all", map[string]string{Prefix + "enable-cors": "true", "other/x": "y"}, false, nil, true},
			{"invalid non-access value is ignored", "all", map[string]string{Prefix + "enable-cors": "yes", Prefix + "cors-allow-origin": "*"}, false, []core.Reason{core.InvalidAnnotation}, true},
			{"control character", "all", map[string]string{Prefix + "cors-allow-origin": "a\nb"}, false, []core.Reason{core.InvalidAnnotation}, false},
			{"multi-line key takes line breaks and tabs", "all", map[string]string{Prefix + "server-snippet": "a\r\n\tb\n"}, false, nil, false},
			{"multi-line key refuses other control characters", "all", map[string]string{Prefix + "server-snippet": "a\nb\x00"}, false, []core.Reason{core.InvalidAnnotation}, false},
			{"multi-line key refuses DEL", "all", map[string]string{Prefix + "server-snippet": "a\x7f"}, false, []core.Reason{core.InvalidAnnotation}, false},
			{"list key takes line breaks around its entries", "all", map[string]string{Prefix + "allowlist-source-range": "\n 10.0.0.0/8,\r\n\t172.16.0.0/12 ,\n192.168.0.0/16\n"}, false, nil, false},
			{"list key refuses a line break inside an entry", "all", map[string]string{Prefix + "allowlist-source-range": "10.0.0.0/8\n192.168.0.0/16\n"}, true, []core.Reason{core.InvalidAnnotation}, false},
			{"list key refuses other control characters around entries", "all", map[string]string{Prefix + "allowlist-source-range": "10.0.0.0/8,\x00\n192.168.0.0/16"}, true, []core.Reason{core.InvalidAnnotation}, false},
			{"list key refuses a vertical tab around entries", "all", map[string]string{Prefix + "allowlist-source-range": "10.0.0.0/8,\v192.168.0.0/16"}, true, []core.Reason{core.InvalidAnnotation}, false},
			{"value too long", "all", map[string]string{Prefix + "cors-allow-origin": strings.Repeat("a", 4097)}, false, []core.Reason{core.InvalidAnnotation}, false},
			{"invalid access value refuses", "all", map[string]string{Prefix + "auth-type": "x\x00"}, true, []core.Reason{core.InvalidAnnotation}, false},
			{"unknown key", "all", map[string]string{Prefix + "limit-rps": "5"}, false, []core.Reason{core.UnknownAnnotation}, false},
			{"disabled family is unknown", "all,-cors", map[string]string{Prefix + "enable-cors": "true"}, false, []core.Reason{core.UnknownAnnotation}, false},
			{"disabled access family refuses", "all,-auth", map[string]string{Prefix + "auth-type": "basic"}, true, []core.Reason{core.UnsupportedAccessControl}, false},
			{"wildcard key of a disabled access family refuses", "cors", map[string]string{Prefix + "auth-tls-secret": "s"}, true, []core.Reason{core.UnsupportedAccessControl}, false},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				seen, ranges = nil, ""
				sel, err := Select(tc.spec)
				if err != nil {
					t.Fatal(err)
				}
				out := Apply(sel, origin, tc.annotations, nil)
				if out.Refused != tc.refused {
					t.Errorf("refused %t, want %t (%v)", out.Refused, tc.refused, out.Findings)
				}
				var reasons []core.Reason
				for _, f := range out.Findings {
					reasons = append(reasons, f.Reason)
					if strings.Contains(f.Message, "\n") || strings.Contains(f.Message, "\x00") {
						t.Errorf("a finding carries the raw value: %q", f.Message)
					}
				}
				if strings.Join(toStrings(reasons), ",") != strings.Join(toStrings(tc.reasons), ",") {
					t.Errorf("reasons %v, want %v", reasons, tc.reasons)
				}
				if touched := out.Settings.AppRoot == "/touched"; touched != tc.touched {
					t.Errorf("fragment applied %t, want %t", touched, tc.touched)
				}
				if _, ok := seen["enable-cors"]; ok && tc.name == "invalid non-access value is ignored" {
					t.Error("Parse saw an invalid value")
				}
				if want := tc.annotations[Prefix+"allowlist-source-range"]; want != "" && ranges != "" && ranges != want {
					t.Errorf("Parse saw %q, want the value as written, %q", ranges, want)
				}
			})
		}
	})
}

var errBool = errorString("not a boolean")

type errorString string

func (e errorString) Error() string { return string(e) }

func toStrings(rs []core.Reason) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return out
}

func TestOtherPrefix(t *testing.T) {
	withRegistry(t, func() {
		Register(family("basic-auth", true, "auth-type"))
		Register(family("cors", false, "enable-cors"))
		out := Apply(All(), core.Origin{Kind: "Ingress", Namespace: "a", Name: "b"}, map[string]string{
			"custom.example.com/auth-type":   "basic",
			"custom.example.com/enable-cors": "true",
			"kubernetes.io/ingress.class":    "nginx",
			"no-slash":                       "x",
		}, nil)
		if out.Refused || len(out.Findings) != 1 || out.Findings[0].Reason != core.UnknownAnnotation ||
			!strings.Contains(out.Findings[0].Message, `"custom.example.com/auth-type" looks like ingress-nginx's nginx.ingress.kubernetes.io/auth-type under another prefix`) {
			t.Errorf("refused %t, findings %v; want one UnknownAnnotation for the access key only", out.Refused, out.Findings)
		}
	})
}

func TestRefs(t *testing.T) {
	withRegistry(t, func() {
		f := family("basic-auth", true, "auth-secret", "auth-type")
		f.Keys[0].Names = Secret
		Register(f)
		got := Refs(Secret, "shop", map[string]string{
			Prefix + "auth-secret": " users ",
			Prefix + "auth-type":   "basic",
			"other.io/auth-secret": "not-ours",
		})
		if !slices.Equal(got, []string{"users"}) {
			t.Errorf("Refs = %q, want [users]", got)
		}
		got = Refs(Secret, "shop", map[string]string{Prefix + "auth-secret": "shop/users"})
		if !slices.Equal(got, []string{"users"}) {
			t.Errorf("namespace/name of the object's namespace: %q, want [users]", got)
		}
		if got = Refs(Secret, "shop", map[string]string{Prefix + "auth-secret": "other/users"}); len(got) != 0 {
			t.Errorf("another namespace's Secret: %q, want none", got)
		}
	})
}
