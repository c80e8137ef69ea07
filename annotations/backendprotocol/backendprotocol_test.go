package backendprotocol_test

import (
	"strings"
	"testing"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

var origin = core.Origin{Kind: "Ingress", Namespace: "shop", Name: "web"}

func TestBackendProtocol(t *testing.T) {
	const key = registry.Prefix + "backend-protocol"
	tests := []struct {
		name  string
		value string // "-" for no annotation
		want  config.Scheme
		// problem is part of the InvalidAnnotation message; "" for none.
		problem string
	}{
		{name: "absent is HTTP", value: "-", want: ""},
		{name: "HTTP keeps the default scheme", value: "HTTP", want: ""},
		{name: "http in lower case", value: "http", want: ""},
		{name: "HTTPS", value: "HTTPS", want: config.SchemeHTTPS},
		{name: "https in lower case", value: "https", want: config.SchemeHTTPS},
		{name: "GRPC is h2c", value: "GRPC", want: config.SchemeH2C},
		{name: "grpc with spaces", value: "  grpc ", want: config.SchemeH2C},
		{name: "GRPCS is h2", value: "GRPCS", want: config.SchemeH2},
		{name: "mixed case", value: "GrPcS", want: config.SchemeH2},
		{name: "FCGI is not supported", value: "FCGI", problem: `"FCGI" (FastCGI) is not supported`},
		{name: "fcgi in lower case", value: "fcgi", problem: `"fcgi" (FastCGI) is not supported`},
		{name: "AUTO_HTTP is not supported", value: "AUTO_HTTP", problem: `"AUTO_HTTP" (the client's scheme, HTTP or HTTPS, towards the members) is not supported`},
		{name: "AJP is not supported", value: "ajp", problem: `"ajp" (the Apache JServ Protocol) is not supported`},
		{name: "h2c is not a value", value: "h2c", problem: `"h2c" is not one of HTTP, HTTPS, GRPC, GRPCS`},
		{name: "empty", value: "", problem: `"" is not one of`},
		{name: "a scheme URL", value: "https://", problem: `"https://" is not one of`},
		{name: "control characters", value: "HTTPS\n", problem: "control characters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			annotations := map[string]string{}
			if tc.value != "-" {
				annotations[key] = tc.value
			}
			got := registry.Apply(registry.All(), origin, annotations, nil)
			if got.Settings.Pool.Scheme != tc.want {
				t.Errorf("scheme = %q, want %q", got.Settings.Pool.Scheme, tc.want)
			}
			if !got.Settings.Pool.IsZero() && tc.want == "" {
				t.Errorf("pool settings = %+v, want the defaults (the plain pool)", got.Settings.Pool)
			}
			if got.Refused {
				t.Error("the object is refused; backend-protocol never refuses")
			}
			checkFinding(t, got.Findings, key, tc.problem)
		})
	}
}

// TestDisabled checks that a disabled family leaves the backend on HTTP.
func TestDisabled(t *testing.T) {
	sel, err := registry.Select("all,-backend-protocol")
	if err != nil {
		t.Fatal(err)
	}
	got := registry.Apply(sel, origin, map[string]string{registry.Prefix + "backend-protocol": "HTTPS"}, nil)
	if got.Settings.Pool.Scheme != "" || got.Refused {
		t.Errorf("scheme %q, refused %v; want the default scheme, served", got.Settings.Pool.Scheme, got.Refused)
	}
	if len(got.Findings) != 1 || got.Findings[0].Reason != core.UnknownAnnotation || !strings.Contains(got.Findings[0].Message, "disabled") {
		t.Errorf("findings = %v, want one UnknownAnnotation saying the family is disabled", got.Findings)
	}
}

// checkFinding checks that findings are one InvalidAnnotation naming key
// and holding problem, or none when problem is "".
func checkFinding(t *testing.T, findings []core.Finding, key, problem string) {
	t.Helper()
	if problem == "" {
		if len(findings) != 0 {
			t.Errorf("findings = %v, want none", findings)
		}
		return
	}
	if len(findings) != 1 {
		t.Fatalf("findings = %v, want one", findings)
	}
	f := findings[0]
	if f.Reason != core.InvalidAnnotation || !strings.Contains(f.Message, key+": ") || !strings.Contains(f.Message, problem) ||
		!strings.HasSuffix(f.Message, "the key is ignored") {
		t.Errorf("finding = %s: %s\nwant InvalidAnnotation naming %s, holding %q, ending with the key being ignored", f.Reason, f.Message, key, problem)
	}
}
