package ignored_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

const p = registry.Prefix

var origin = core.Origin{Kind: "Ingress", Namespace: "shop", Name: "web", Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}

// TestEveryKey: each key of the family, with any value (a bad one, a
// multi-line one), gets one UnknownAnnotation finding with its explanation,
// and the object is served unchanged.
func TestEveryKey(t *testing.T) {
	f := registry.Owner("enable-influxdb")
	if f == nil || f.Name != "ignored" {
		t.Fatalf("enable-influxdb is owned by %v", f)
	}
	for _, k := range f.Keys {
		name := k.Name
		if k.Wildcard {
			name += "x"
		}
		for _, value := range []string{"10", "not a number", "a\nb", ""} {
			out := registry.Apply(registry.All(), origin, map[string]string{p + name: value}, nil)
			want := p + name + " has no counterpart in Ramjet: " + k.Ignored + "; it is ignored"
			if out.Refused || !reflect.DeepEqual(out.Settings, core.Settings{}) || len(out.Findings) != 1 ||
				out.Findings[0].Reason != core.UnknownAnnotation || out.Findings[0].Message != want {
				t.Errorf("%s: %q: refused %t, settings %+v, findings %v; want one UnknownAnnotation %q", name, value, out.Refused, out.Settings, out.Findings, want)
			}
		}
		if k.Ignored == "" || k.Validate == nil || k.Doc == "" || k.Differs != "" {
			t.Errorf("%s: want Ignored, Validate and Doc, and no Differs", k.Name)
		}
	}
}

func TestApply(t *testing.T) {
	tests := []struct {
		name        string
		spec        string
		annotations map[string]string
		findings    []string // substrings of the findings, in order
	}{
		{"influxdb, every key", "all",
			map[string]string{p + "enable-influxdb": "true", p + "influxdb-measurement": "requests", p + "influxdb-port": "8089"},
			[]string{p + "enable-influxdb has no counterpart", p + "influxdb-measurement has no counterpart", p + "influxdb-port has no counterpart"}},
		{"tracing", "all", map[string]string{p + "enable-opentelemetry": "true", p + "opentelemetry-operation-name": "HTTP $request_method"},
			[]string{p + "enable-opentelemetry has no counterpart in Ramjet: no tracing spans are produced", p + "opentelemetry-operation-name has no counterpart"}},
		{"keys of other families are theirs", "all", map[string]string{p + "proxy-body-size": "8m", p + "enable-cors": "true", p + "limit-rps": "1", p + "global-rate-limit": "1",
			p + "global-rate-limit-window": "1m", p + "custom-http-errors": "404,503", p + "mirror-target": "https://test.example.com$request_uri", p + "enable-influxdb": "true"},
			[]string{p + "enable-influxdb has no counterpart"}},
		{"unknown keys stay unknown", "all", map[string]string{p + "limit-requests": "1"},
			[]string{`"` + p + `limit-requests" is not an annotation Ramjet knows; it is ignored`}},
		{"disabled family", "all,-ignored", map[string]string{p + "enable-influxdb": "true"},
			[]string{p + "enable-influxdb belongs to the family ignored, which is disabled (--annotations); it is ignored"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := registry.Select(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			out := registry.Apply(sel, origin, tc.annotations, nil)
			if out.Refused {
				t.Error("refused")
			}
			var mine []core.Finding
			for _, f := range out.Findings {
				if f.Reason == core.UnknownAnnotation {
					mine = append(mine, f)
				}
			}
			if len(mine) != len(tc.findings) {
				t.Errorf("%d UnknownAnnotation findings, want %d: %v", len(mine), len(tc.findings), out.Findings)
			}
			for i, f := range mine {
				if i < len(tc.findings) && !strings.Contains(f.Message, tc.findings[i]) {
					t.Errorf("finding %d:\n%s\nwant it to contain\n%s", i, f.Message, tc.findings[i])
				}
			}
		})
	}
}
