package bodysize_test

import (
	"strconv"
	"strings"
	"testing"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

func TestApply(t *testing.T) {
	const key = registry.Prefix + "proxy-body-size"
	tests := []struct {
		name  string
		value string
		want  int64 // -1: MaxBody stays nil (the server's limit)
		// finding holds substrings of the one expected finding, "" for none.
		finding string
	}{
		{"bytes", "1024", 1024, ""},
		{"k", "64k", 64 << 10, ""},
		{"m", "8m", 8 << 20, ""},
		{"g", "2g", 2 << 30, ""},
		{"upper-case suffix", "8M", 8 << 20, ""},
		{"upper-case K", "16K", 16 << 10, ""},
		{"whitespace", " 8m ", 8 << 20, ""},
		{"zero is no limit", "0", 0, ""},
		{"ramjetd's largest", "4294967296g", 1 << 62, ""},
		{"over ramjetd's largest", "4294967297g", -1, `InvalidAnnotation: nginx.ingress.kubernetes.io/proxy-body-size: "4294967297g" is larger than ramjetd accepts (at most 4294967296g); the key is ignored`},
		{"b suffix", "10b", -1, `proxy-body-size: "10b" is not a size`},
		{"unit word", "8MB", -1, `"8MB" is not a size`},
		{"negative", "-1", -1, `"-1" is not a size`},
		{"plus sign", "+5m", -1, `is not a size`},
		{"fraction", "1.5m", -1, `is not a size`},
		{"empty", "", -1, `"" is not a size`},
		{"int64 overflow", "9999999999999999999", -1, `is not a size`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			applied := registry.Apply(registry.All(), core.Origin{Kind: "Ingress", Namespace: "app", Name: "web"}, map[string]string{key: tc.value}, nil)
			got := applied.Settings.Policies.MaxBody
			switch {
			case tc.want < 0 && got != nil:
				t.Errorf("max body = %d, want the server's limit (nil)", *got)
			case tc.want >= 0 && (got == nil || int64(*got) != tc.want):
				t.Errorf("max body = %v, want %d", got, tc.want)
			}
			if got != nil {
				// ramjet.yaml holds the size as an integer; ramjetd must read it back.
				if _, err := config.ParseByteSize(strconv.FormatInt(int64(*got), 10)); err != nil {
					t.Errorf("ramjetd cannot read the max body %d back: %v", *got, err)
				}
			}
			if applied.Refused {
				t.Error("the object is refused; body-size never refuses")
			}
			checkFindings(t, applied.Findings, tc.finding)
		})
	}
}

// TestAbsent checks that an object without the key keeps the server's
// limit.
func TestAbsent(t *testing.T) {
	applied := registry.Apply(registry.All(), core.Origin{Kind: "Ingress", Namespace: "app", Name: "web"}, map[string]string{"other": "x"}, nil)
	if applied.Settings.Policies.MaxBody != nil || len(applied.Findings) != 0 {
		t.Errorf("settings = %+v, findings = %v; want no max body and no findings", applied.Settings.Policies, applied.Findings)
	}
}

func checkFindings(t *testing.T, findings []core.Finding, want string) {
	t.Helper()
	if want == "" {
		if len(findings) != 0 {
			t.Errorf("findings = %v, want none", findings)
		}
		return
	}
	if len(findings) != 1 {
		t.Fatalf("findings = %v, want one containing %q", findings, want)
	}
	if got := string(findings[0].Reason) + ": " + findings[0].Message; !strings.Contains(got, want) || findings[0].Reason != core.InvalidAnnotation {
		t.Errorf("finding = %q, want an InvalidAnnotation containing %q", got, want)
	}
}
