package customerrors_test

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

// TestParse: the values each key accepts, what they become, and the
// finding of each invalid one, naming the key.
func TestParse(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		want        *core.ErrorPages
		finding     string // a phrase of the only finding; "" for none
	}{
		{"statuses sorted, each once", map[string]string{p + "custom-http-errors": " 503,404 , 404,\n500"},
			&core.ErrorPages{Statuses: []int{404, 500, 503}}, ""},
		{"bounds", map[string]string{p + "custom-http-errors": "400,599"}, &core.ErrorPages{Statuses: []int{400, 599}}, ""},
		{"trailing comma", map[string]string{p + "custom-http-errors": "404,"}, &core.ErrorPages{Statuses: []int{404}}, ""},
		{"a status below 400", map[string]string{p + "custom-http-errors": "404,302"}, nil, p + `custom-http-errors: entry 2: "302" is not a status 400..599; the key is ignored`},
		{"a status over 599", map[string]string{p + "custom-http-errors": "600"}, nil, `"600" is not a status 400..599`},
		{"four digits", map[string]string{p + "custom-http-errors": "0404"}, nil, `"0404" is not a status 400..599`},
		{"a sign", map[string]string{p + "custom-http-errors": "+404"}, nil, `"+404" is not a status 400..599`},
		{"no status", map[string]string{p + "custom-http-errors": ","}, nil, p + "custom-http-errors: lists no status"},
		{"default-backend", map[string]string{p + "default-backend": " errors "}, &core.ErrorPages{Service: "errors"}, ""},
		{"default-backend of another namespace", map[string]string{p + "default-backend": "ops/errors"}, nil, p + `default-backend: "ops/errors" is not a Service name`},
		{"default-backend upper case", map[string]string{p + "default-backend": "Errors"}, nil, `"Errors" is not a Service name`},
		{"own answers only", map[string]string{p + "custom-http-errors": "503", p + "disable-proxy-intercept-errors": "true"},
			&core.ErrorPages{Statuses: []int{503}, OwnAnswersOnly: true}, ""},
		{"intercept off alone", map[string]string{p + "disable-proxy-intercept-errors": "true"}, nil,
			p + "disable-proxy-intercept-errors is ignored: it has no effect without " + p + "custom-http-errors"},
		{"intercept false alone", map[string]string{p + "disable-proxy-intercept-errors": "false"}, nil, ""},
		{"intercept not a boolean", map[string]string{p + "custom-http-errors": "404", p + "disable-proxy-intercept-errors": "yes please"},
			&core.ErrorPages{Statuses: []int{404}}, p + `disable-proxy-intercept-errors: "yes please" is not a boolean`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := registry.Apply(registry.All(), origin, tc.annotations, nil)
			if out.Refused {
				t.Error("refused: the family is no access control")
			}
			if !reflect.DeepEqual(out.Settings.ErrorPages, tc.want) {
				t.Errorf("ErrorPages %+v, want %+v", out.Settings.ErrorPages, tc.want)
			}
			switch {
			case tc.finding == "" && len(out.Findings) > 0:
				t.Errorf("findings %v, want none", out.Findings)
			case tc.finding != "" && (len(out.Findings) != 1 || !strings.Contains(out.Findings[0].Message, tc.finding)):
				t.Errorf("findings %v, want one containing %q", out.Findings, tc.finding)
			}
		})
	}
}
