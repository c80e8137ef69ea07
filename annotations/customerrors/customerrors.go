// Package customerrors is the custom-errors family: custom-http-errors,
// default-backend and disable-proxy-intercept-errors, with ingress-nginx's
// semantics. The listed statuses of the members' answers, and of ramjetd's
// own error answers, are replaced by the answer of an error backend (the
// object's default-backend Service, else the controller's
// --default-backend), which receives ingress-nginx's X-Code, X-Format,
// X-Original-URI, X-Namespace, X-Ingress-Name, X-Service-Name,
// X-Service-Port and X-Request-ID headers; the default-backend Service
// also serves a path whose Service has no ready endpoints. The family
// only reads the values: the Ingress input resolves the Service, and the
// core renders the data plane's error_pages policy.
package customerrors

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

// The keys.
const (
	keyErrors    = "custom-http-errors"
	keyBackend   = "default-backend"
	keyIntercept = "disable-proxy-intercept-errors"
)

const (
	errorsDiffers = "An invalid value (an entry that is not a status 400..599) is ignored with a finding, where ingress-nginx rejects the Ingress; " +
		"a status listed twice counts once. Without default-backend and without the controller's --default-backend the key cannot be served " +
		"and is ignored with a finding (ingress-nginx sends the errors to its internal server, which answers 404 to each). " +
		"The error backend receives a GET without the request's body, whatever the request's method (nginx's named location keeps the method); the member's error body is discarded. " +
		"When it cannot be reached or does not answer within 10 s, the client gets the original answer (nginx answers 502). " +
		"The controller's own answers replaced are ramjetd's: 502, 503 (no endpoints), 504, 413, 408 and 400; " +
		"the answers of access controls (401, 403) and rate limits are not. Ramjet has no ConfigMap: there is no global custom-http-errors list. " +
		"spec.defaultBackend and the catch-all do not replace their answers."
	backendDiffers = "The Service's first port, as ingress-nginx. A Service that does not exist, or has no port, is reported and the key is ignored " +
		"(the errors go to --default-backend, as in ingress-nginx). ingress-nginx uses the Service only while it has endpoints, and " +
		"decides when it renders its configuration; ramjetd decides per request, so a path takes the fallback as soon as its pool has no member, " +
		"and an error page request to a default-backend Service without endpoints gives the original answer."
)

func init() {
	registry.Register(&registry.Family{
		Name: "custom-errors",
		Doc:  "Error pages from a default backend for listed statuses, and a default backend for paths whose Service has no endpoints.",
		Keys: []registry.Key{
			{Name: keyErrors, Validate: validStatuses, List: true, Risk: registry.RiskLow, Scope: registry.ScopeIngress,
				Doc: "Comma-separated statuses (400..599) whose answers, from the members or from ramjetd itself, are replaced by the answer of the default-backend Service, " +
					"else of the controller's --default-backend: it receives a GET of / with X-Code, X-Format, X-Original-URI, X-Namespace, X-Ingress-Name, " +
					"X-Service-Name, X-Service-Port and X-Request-ID, and the client gets its status and body.",
				Differs: errorsDiffers},
			{Name: keyBackend, Validate: registry.Trimmed(validService), Risk: registry.RiskLow, Scope: registry.ScopeIngress,
				Doc: "A Service of the object's namespace that serves the object's paths while their Service has no ready endpoints (with X-Code: 503 and the other X-* headers), " +
					"and answers custom-http-errors.",
				Differs: backendDiffers},
			{Name: keyIntercept, Validate: registry.Bool, Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "false",
				Doc:     "With custom-http-errors: the members' answers reach the client unchanged; only ramjetd's own error answers are replaced.",
				Differs: "Without custom-http-errors it has no effect, as in ingress-nginx (a finding says so)."},
		},
		Parse: parse,
	})
}

// parse reads the family's keys, which their validators have checked.
func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	ep := &core.ErrorPages{Service: strings.TrimSpace(values[keyBackend])}
	if v, ok := values[keyErrors]; ok {
		ep.Statuses = statuses(v)
	}
	if v, ok := values[keyIntercept]; ok {
		own, _ := registry.ParseBool(v)
		switch {
		case own && len(ep.Statuses) == 0:
			ctx.Note(core.UnknownAnnotation, "%s%s is ignored: it has no effect without %s%s", registry.Prefix, keyIntercept, registry.Prefix, keyErrors)
		default:
			ep.OwnAnswersOnly = own
		}
	}
	if len(ep.Statuses) == 0 && ep.Service == "" {
		return nil
	}
	return func(s *core.Settings) { s.ErrorPages = ep }
}

// statuses reads a validated list: sorted, each once.
func statuses(v string) []int {
	var out []int
	for _, item := range registry.SplitList(v) {
		n, _ := strconv.Atoi(item)
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// validStatuses accepts a comma-separated list of at least one status of
// three digits, 400..599, as ingress-nginx's ^(?:[4,5]\d{2},?)*$.
func validStatuses(v string) error {
	items := registry.SplitList(v)
	if len(items) == 0 {
		return fmt.Errorf("lists no status; want statuses 400..599 separated by commas")
	}
	for i, item := range items {
		n, err := strconv.Atoi(item)
		if err != nil || len(item) != 3 || n < 400 || n > 599 {
			return fmt.Errorf("entry %d: %s is not a status 400..599", i+1, core.Quote(item))
		}
	}
	return nil
}

// validService accepts a Service name (a DNS-1035 label), as
// ingress-nginx's ValidateServiceName.
func validService(v string) error {
	if len(validation.IsDNS1035Label(v)) > 0 {
		return fmt.Errorf("%s is not a Service name (a DNS-1035 label: lower-case letters, digits and '-', starting with a letter)", core.Quote(v))
	}
	return nil
}
