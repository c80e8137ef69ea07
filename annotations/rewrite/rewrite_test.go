package rewrite_test

import (
	"strings"
	"testing"
	"time"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

const (
	p       = registry.Prefix
	target  = p + "rewrite-target"
	regex   = p + "use-regex"
	appRoot = p + "app-root"
	vhost   = p + "upstream-vhost"
	xfp     = p + "x-forwarded-prefix"
)

func TestApply(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		regex       bool // use-regex asked; a target's regex paths are the input's decision (it knows the paths)
		rewrite     *config.Rewrite
		appRoot     string
		findings    []string // substrings of the findings, in order
	}{
		{"no keys", nil, false, nil, "", nil},
		{"target with captures", map[string]string{target: "/$2"}, false, &config.Rewrite{Path: "/$2"}, "", nil},
		{"several captures", map[string]string{target: "/api/$1/v2/$3"}, false, &config.Rewrite{Path: "/api/$1/v2/$3"}, "", nil},
		{"$10 is $1 then 0, as in nginx", map[string]string{target: "/$10"}, false, &config.Rewrite{Path: "/$10"}, "", nil},
		{"target without captures", map[string]string{target: "/"}, false, &config.Rewrite{Path: "/"}, "", nil},
		{"whitespace around is trimmed, as ingress-nginx", map[string]string{target: " /$1 "}, false, &config.Rewrite{Path: "/$1"}, "", nil},
		{"use-regex false with a target", map[string]string{target: "/$1", regex: "false"}, false, &config.Rewrite{Path: "/$1"}, "", nil},
		{"rewrite and upstream-vhost share the policy", map[string]string{target: "/$1", vhost: "api.internal"}, false,
			&config.Rewrite{Path: "/$1", Host: "api.internal"}, "", nil},
		{"no leading slash", map[string]string{target: "$1"}, false, nil, "",
			[]string{`InvalidAnnotation: nginx.ingress.kubernetes.io/rewrite-target: "$1" must start with /; the key is ignored`}},
		{"query string", map[string]string{target: "/$2?module=x"}, false, nil, "",
			[]string{`rewrite-target: "/$2?module=x" must not hold '?' or '#' (the query string of the request is kept); the key is ignored`}},
		{"fragment", map[string]string{target: "/a#b"}, false, nil, "", []string{`must not hold '?' or '#'`}},
		{"inner whitespace", map[string]string{target: "/a b"}, false, nil, "", []string{`"/a b" must not hold whitespace`}},
		{"nginx variable", map[string]string{target: "/$host/x"}, false, nil, "",
			[]string{`rewrite-target: "/$host/x": only $1..$9 (the submatches of the path) are replaced; nginx variables such as $host are not available; the key is ignored`}},
		{"request_uri", map[string]string{target: "/app$request_uri"}, false, nil, "", []string{`only $1..$9`}},
		{"$0", map[string]string{target: "/$0"}, false, nil, "", []string{`only $1..$9`}},
		{"trailing $", map[string]string{target: "/x$"}, false, nil, "", []string{`only $1..$9`}},
		{"empty", map[string]string{target: ""}, false, nil, "", []string{`rewrite-target: "" must start with /`}},
		{"dot-segments", map[string]string{target: "/../../admin"}, false, nil, "",
			[]string{`InvalidAnnotation: nginx.ingress.kubernetes.io/rewrite-target: "/../../admin" must not hold . or .. segments (also percent-encoded): the member would resolve them to another path; the key is ignored`}},
		{"a dot-segment after a capture", map[string]string{target: "/$1/../x"}, false, nil, "", []string{`must not hold . or .. segments`}},
		{"a trailing dot-segment", map[string]string{target: "/api/."}, false, nil, "", []string{`must not hold . or .. segments`}},
		{"percent-encoded dot-segments", map[string]string{target: "/%2e%2E/admin"}, false, nil, "", []string{`must not hold . or .. segments`}},
		{"dots inside a segment are a name", map[string]string{target: "/v1.2/..x/$1"}, false, &config.Rewrite{Path: "/v1.2/..x/$1"}, "", nil},
		{"invalid target keeps use-regex", map[string]string{target: "x", regex: "true"}, true, nil, "", []string{`rewrite-target: "x" must start with /`}},

		{"x-forwarded-prefix", map[string]string{target: "/$2", xfp: "/api"}, false, &config.Rewrite{Path: "/$2", ForwardedPrefix: "/api"}, "", nil},
		{"x-forwarded-prefix with a submatch", map[string]string{target: "/$2", xfp: " /$1 "}, false, &config.Rewrite{Path: "/$2", ForwardedPrefix: "/$1"}, "", nil},
		{"x-forwarded-prefix without rewrite-target", map[string]string{xfp: "/api"}, false, nil, "",
			[]string{`UnknownAnnotation: nginx.ingress.kubernetes.io/x-forwarded-prefix: "/api" has no effect without a (valid) rewrite-target`}},
		{"x-forwarded-prefix with an invalid target", map[string]string{target: "x", xfp: "/api"}, false, nil, "",
			[]string{`rewrite-target: "x" must start with /`, `x-forwarded-prefix: "/api" has no effect`}},
		{"x-forwarded-prefix nginx variable", map[string]string{target: "/", xfp: "/$host"}, false, &config.Rewrite{Path: "/"}, "",
			[]string{`InvalidAnnotation: nginx.ingress.kubernetes.io/x-forwarded-prefix: "/$host": only $1..$9 (the submatches of the path) are replaced; nginx variables such as $host are not available; the key is ignored`}},
		{"x-forwarded-prefix characters", map[string]string{target: "/", xfp: "/a b"}, false, &config.Rewrite{Path: "/"}, "",
			[]string{`x-forwarded-prefix: "/a b" may hold only letters, digits, - . _ ~ / : and $1..$9`}},
		{"x-forwarded-prefix quote", map[string]string{target: "/", xfp: `/a"`}, false, &config.Rewrite{Path: "/"}, "", []string{`may hold only letters`}},
		{"x-forwarded-prefix empty", map[string]string{target: "/", xfp: ""}, false, &config.Rewrite{Path: "/"}, "", []string{`x-forwarded-prefix: must not be empty`}},

		{"use-regex true", map[string]string{regex: "true"}, true, nil, "", nil},
		{"use-regex True, as strconv.ParseBool", map[string]string{regex: "True"}, true, nil, "", nil},
		{"use-regex 1", map[string]string{regex: "1"}, true, nil, "", nil},
		{"use-regex with spaces", map[string]string{regex: " true "}, true, nil, "", nil},
		{"use-regex false", map[string]string{regex: "false"}, false, nil, "", nil},
		{"use-regex FALSE", map[string]string{regex: "FALSE"}, false, nil, "", nil},
		{"use-regex yes", map[string]string{regex: "yes"}, false, nil, "",
			[]string{`InvalidAnnotation: nginx.ingress.kubernetes.io/use-regex: "yes" is not a boolean (true or false); the key is ignored`}},

		{"app-root", map[string]string{appRoot: "/app"}, false, nil, "/app", nil},
		{"app-root trimmed", map[string]string{appRoot: " /app/index.html "}, false, nil, "/app/index.html", nil},
		{"app-root with a query", map[string]string{appRoot: "/app?lang=en"}, false, nil, "/app?lang=en", nil},
		{"app-root needs no regex", map[string]string{appRoot: "/app", regex: "false"}, false, nil, "/app", nil},
		{"app-root relative", map[string]string{appRoot: "app"}, false, nil, "",
			[]string{`InvalidAnnotation: nginx.ingress.kubernetes.io/app-root: "app" must be a path such as /app; the key is ignored`}},
		{"app-root absolute URL", map[string]string{appRoot: "https://example.com/app"}, false, nil, "", []string{`"https://example.com/app" must be a path such as /app`}},
		{"app-root to another host", map[string]string{appRoot: "//evil.example.com/app"}, false, nil, "", []string{`must be a path such as /app`}},
		{"app-root with whitespace", map[string]string{appRoot: "/my app"}, false, nil, "", []string{`"/my app" must not hold whitespace`}},
		{"app-root / would loop", map[string]string{appRoot: "/"}, false, nil, "",
			[]string{`app-root: "/" would redirect / to itself; name the application's path, such as /app; the key is ignored`}},
		{"app-root /?x would loop too", map[string]string{appRoot: "/?x=1"}, false, nil, "", []string{`would redirect / to itself`}},

		{"everything", map[string]string{target: "/$1", regex: "true", appRoot: "/app"}, true, &config.Rewrite{Path: "/$1"}, "/app", nil},
	}
	origin := core.Origin{Kind: "Ingress", Namespace: "shop", Name: "web", Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := registry.Apply(registry.All(), origin, tc.annotations, nil)
			if out.Refused {
				t.Error("refused")
			}
			s := out.Settings
			if s.Regex != tc.regex {
				t.Errorf("regex %t, want %t", s.Regex, tc.regex)
			}
			if got, want := s.Policies.Rewrite, tc.rewrite; (got == nil) != (want == nil) || got != nil && *got != *want {
				t.Errorf("rewrite %+v, want %+v", got, want)
			}
			if s.AppRoot != tc.appRoot {
				t.Errorf("app root %q, want %q", s.AppRoot, tc.appRoot)
			}
			if len(out.Findings) != len(tc.findings) {
				t.Errorf("%d findings, want %d: %v", len(out.Findings), len(tc.findings), out.Findings)
			}
			for i, f := range out.Findings {
				if line := string(f.Reason) + ": " + f.Message; i < len(tc.findings) && !strings.Contains(line, tc.findings[i]) {
					t.Errorf("finding %d:\n%s\nwant it to contain\n%s", i, line, tc.findings[i])
				}
			}
		})
	}
}

// TestDisabled: with the family off, its keys are unknown and change
// nothing.
func TestDisabled(t *testing.T) {
	sel, err := registry.Select("all,-rewrite")
	if err != nil {
		t.Fatal(err)
	}
	out := registry.Apply(sel, core.Origin{Kind: "Ingress", Namespace: "shop", Name: "web"}, map[string]string{target: "/$1", appRoot: "/app"}, nil)
	if out.Settings.Regex || out.Settings.Policies.Rewrite != nil || out.Settings.AppRoot != "" || out.Refused {
		t.Errorf("a disabled family changed the settings: %+v", out.Settings)
	}
	if len(out.Findings) != 2 || !strings.Contains(out.Findings[0].Message, "app-root belongs to the family rewrite, which is disabled (--annotations); it is ignored") {
		t.Errorf("findings %v", out.Findings)
	}
}
