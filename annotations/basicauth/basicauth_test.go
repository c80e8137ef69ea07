package basicauth_test

import (
	"strings"
	"testing"
	"time"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

const (
	p       = registry.Prefix
	kind    = p + "auth-type"
	secret  = p + "auth-secret"
	typ     = p + "auth-secret-type"
	realm   = p + "auth-realm"
	bcrypt  = "$2y$05$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a" // "secret"
	apr1    = "$apr1$8charsal$r2w4Ipe7gPX8QUCWG2b6J."                        // "secret"
	sha     = "{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ="                            // weak: unsalted SHA-1
	plain   = "hunter2"                                                      // weak: plain text
	objects = "shop"
)

// secrets is a map-backed registry.Secrets: "namespace/name" to data.
type secrets map[string]map[string]string

func (s secrets) Secret(namespace, name string) (map[string][]byte, bool) {
	d, ok := s[namespace+"/"+name]
	if !ok {
		return nil, false
	}
	out := make(map[string][]byte, len(d))
	for k, v := range d {
		out[k] = []byte(v)
	}
	return out, true
}

// ConfigMap: the family reads none.
func (s secrets) ConfigMap(string, string) (map[string]string, bool) { return nil, false }

var cluster = secrets{
	"shop/users":     {"auth": "alice:" + bcrypt + "\nbob:" + apr1 + "\n"},
	"shop/map":       {"bob": apr1 + "\n", "alice": " " + bcrypt},
	"shop/no-auth":   {"users": "alice:" + bcrypt},
	"shop/weak":      {"auth": "# staff\nalice:" + bcrypt + "\nbob:" + sha + "\n"},
	"shop/plain":     {"auth": "alice:" + plain},
	"shop/empty":     {"auth": "# nobody\n"},
	"shop/map-weak":  {"alice": bcrypt, "bob": plain},
	"shop/map-break": {"alice": bcrypt, "bob": apr1 + "\ncarol:" + bcrypt},
	"other/users":    {"auth": "alice:" + bcrypt},
}

func TestApply(t *testing.T) {
	on := func(kv ...string) map[string]string {
		m := map[string]string{kind: "basic", secret: "users"}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "-" {
				delete(m, kv[i])
				continue
			}
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name        string
		spec        string
		annotations map[string]string
		refused     bool
		htpasswd    string // "" for no basic auth; not checked when refused
		realm       string
		findings    []string // substrings of the findings, in order
	}{
		{"auth-file", "all", on(), false, cluster["shop/users"]["auth"], "", nil},
		{"realm", "all", on(realm, "Staff only: v2"), false, cluster["shop/users"]["auth"], "Staff only: v2", nil},
		{"namespace/name of the object's namespace", "all", on(secret, "shop/users"), false, cluster["shop/users"]["auth"], "", nil},
		{"explicit auth-file", "all", on(typ, "auth-file"), false, cluster["shop/users"]["auth"], "", nil},
		{"white space around values is trimmed, as ingress-nginx", "all", on(kind, " basic ", secret, " users\t", typ, "auth-file ", realm, " Staff "), false,
			cluster["shop/users"]["auth"], "Staff", nil},
		{"comment lines are fine", "all", on(secret, "weak", typ, "auth-file"), true, "", "",
			[]string{`InvalidAnnotation: nginx.ingress.kubernetes.io/auth-secret "weak": the key auth line 3: {SHA} hash is unsupported (unsalted SHA-1): use bcrypt (htpasswd -B); the object is not served`}},
		{"auth-map: one line per key, sorted, values trimmed", "all", on(secret, "map", typ, "auth-map"), false,
			"alice:" + bcrypt + "\nbob:" + apr1 + "\n", "", nil},
		{"auth-map weak hash names the line", "all", on(secret, "map-weak", typ, "auth-map"), true, "", "",
			[]string{`auth-secret "map-weak": the auth-map users (one line per key, in sorted order) line 2: plain-text password refused`}},
		{"auth-map value with a line break", "all", on(secret, "map-break", typ, "auth-map"), true, "", "",
			[]string{`auth-secret "map-break": the value of key 2 (in sorted order) holds a line break; the object is not served`}},
		{"plain-text password", "all", on(secret, "plain"), true, "", "",
			[]string{`auth-secret "plain": the key auth line 1: plain-text password refused`}},
		{"no users", "all", on(secret, "empty"), true, "", "", []string{`auth-secret "empty": the key auth: no users`}},
		{"missing Secret", "all", on(secret, "nope"), true, "", "",
			[]string{`InvalidAnnotation: nginx.ingress.kubernetes.io/auth-secret "nope": the Secret does not exist; the object is not served`}},
		{"Secret without the key auth", "all", on(secret, "no-auth"), true, "", "",
			[]string{`auth-secret "no-auth": the Secret has no key auth; the object is not served`}},
		{"Secret of another namespace", "all", on(secret, "other/users"), true, "", "",
			[]string{`InvalidAnnotation: nginx.ingress.kubernetes.io/auth-secret: "other/users" is in another namespace; only Secrets of the object's namespace are read; the object is not served`}},
		{"malformed Secret name", "all", on(secret, "a/b/c"), true, "", "",
			[]string{`auth-secret: "a/b/c" is not a Secret name (name, or namespace/name); the object is not served`}},
		{"auth-secret without auth-type", "all", on(kind, "-"), true, "", "",
			[]string{`nginx.ingress.kubernetes.io/auth-secret is set without nginx.ingress.kubernetes.io/auth-type: basic; the object is not served rather than served without the authentication it names`}},
		{"auth-type without auth-secret", "all", on(secret, "-"), true, "", "",
			[]string{`nginx.ingress.kubernetes.io/auth-type: basic needs nginx.ingress.kubernetes.io/auth-secret; the object is not served`}},
		{"digest", "all", on(kind, "digest"), true, "", "",
			[]string{`nginx.ingress.kubernetes.io/auth-type: "digest" authentication is not provided (only basic); the object is not served`}},
		{"case matters, as in ingress-nginx", "all", on(kind, "Basic"), true, "", "", []string{`auth-type: "Basic" is not basic; the object is not served`}},
		{"unknown secret type", "all", on(typ, "htpasswd"), true, "", "", []string{`auth-secret-type: "htpasswd" is not one of auth-file, auth-map; the object is not served`}},
		{"realm with a quote", "all", on(realm, `say "hi"`), true, "", "", []string{`auth-realm: "say \"hi\"" must not hold " or \; the object is not served`}},
		{"realm alone configures nothing", "all", map[string]string{realm: "Staff"}, false, "", "",
			[]string{`InvalidAnnotation: nginx.ingress.kubernetes.io/auth-realm has no effect without nginx.ingress.kubernetes.io/auth-type: basic and nginx.ingress.kubernetes.io/auth-secret; it is ignored`}},
		{"secret type alone configures nothing", "all", map[string]string{typ: "auth-map"}, false, "", "", []string{`auth-secret-type has no effect without`}},
		{"realm beside an invalid auth-type: one finding", "all", map[string]string{kind: "ntlm", realm: "Staff"}, true, "", "",
			[]string{`auth-type: "ntlm" is not basic; the object is not served`}},
		{"disabled family: not served", "all,-basic-auth", on(), true, "", "",
			[]string{`UnsupportedAccessControl: nginx.ingress.kubernetes.io/auth-secret belongs to the access-control family basic-auth, which is disabled`,
				`UnsupportedAccessControl: nginx.ingress.kubernetes.io/auth-type belongs to`}},
	}
	origin := core.Origin{Kind: "Ingress", Namespace: objects, Name: "web", Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := registry.Select(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			out := registry.Apply(sel, origin, tc.annotations, cluster)
			if out.Refused != tc.refused {
				t.Errorf("refused %t, want %t", out.Refused, tc.refused)
			}
			if out.Refused {
				// What a refused object's settings hold is never served.
				checkFindings(t, out.Findings, tc.findings)
				return
			}
			got := ""
			if a := out.Settings.BasicAuth; a != nil {
				got = string(a.Htpasswd)
				if a.Realm != tc.realm {
					t.Errorf("realm %q, want %q", a.Realm, tc.realm)
				}
			}
			if got != tc.htpasswd {
				t.Errorf("htpasswd %q, want %q", got, tc.htpasswd)
			}
			if out.Settings.Protected != (tc.htpasswd != "") {
				t.Errorf("protected %t with htpasswd %q", out.Settings.Protected, got)
			}
			checkFindings(t, out.Findings, tc.findings)
		})
	}
}

// checkFindings compares findings with substrings, in order, and checks
// that no finding carries a Secret's content.
func checkFindings(t *testing.T, got []core.Finding, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d findings, want %d: %v", len(got), len(want), got)
	}
	for i, f := range got {
		line := string(f.Reason) + ": " + f.Message
		if i < len(want) && !strings.Contains(line, want[i]) {
			t.Errorf("finding %d:\n%s\nwant it to contain\n%s", i, line, want[i])
		}
		for _, leak := range []string{bcrypt[7:], apr1[6:], sha[5:], plain, "alice", "carol"} {
			if strings.Contains(f.Message, leak) {
				t.Errorf("finding %d quotes the Secret's content (%q): %s", i, leak, f.Message)
			}
		}
	}
}
