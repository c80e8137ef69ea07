// Package redirect is the redirect family: permanent-redirect and
// temporal-redirect, with their -code keys. Every path of the object
// answers with a redirect to the URL, used literally, instead of reaching
// a member; as nginx's return in the rewrite phase, the redirect comes
// before the HTTPS redirect and every access check. temporal-redirect wins
// when both are set, as in ingress-nginx.
package redirect

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

// The keys, and the default codes (ingress-nginx's).
const (
	permanent     = "permanent-redirect"
	permanentCode = "permanent-redirect-code"
	temporal      = "temporal-redirect"
	temporalCode  = "temporal-redirect-code"

	defaultPermanentCode = 301
	defaultTemporalCode  = 302
)

func init() {
	registry.Register(&registry.Family{
		Name: "redirect",
		Doc:  "Answering every path of the object with a redirect to a fixed URL.",
		Keys: []registry.Key{
			{Name: permanent, Validate: validPermanent, Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc:     "Every path of the object answers with a redirect (301 unless permanent-redirect-code says otherwise) to this URL, used literally: the request's path and query are not appended. It comes before the HTTPS redirect and any access control. An absolute http or https URL, or a path starting with /.",
				Differs: "An invalid value is ignored with a finding and the paths reach their backend, where ingress-nginx rejects the whole Ingress; nginx variables such as $request_uri are refused, since Ramjet does not interpolate them (ingress-nginx did up to 1.11), while %, #, + and @, which ingress-nginx 1.12 rejects, are accepted. A path is sent as written for the client to resolve, where nginx makes it absolute with the request's scheme and host."},
			{Name: permanentCode, Validate: codeIn(301, 302, 303, 307, 308), Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "301",
				Doc:     "The status of permanent-redirect: 301, 302, 303, 307 or 308. Does nothing without permanent-redirect.",
				Differs: "ingress-nginx takes 300 to 308 and silently uses 301 for other numbers; with 300, 304, 305 or 306 nginx answers that status with the URL as body and no Location. Ramjet ignores every code but the five with a finding and uses 301; a value that is no number is ignored too, where ingress-nginx rejects the Ingress."},
			{Name: temporal, Validate: validTemporal, Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc:     "As permanent-redirect, with 302 unless temporal-redirect-code says otherwise; wins over permanent-redirect when both are set. An absolute http or https URL.",
				Differs: "An invalid value is ignored with a finding and the paths reach their backend (or permanent-redirect applies), where ingress-nginx rejects the whole Ingress; nginx variables such as $request_uri are refused, since Ramjet does not interpolate them, while %, #, + and @, which ingress-nginx 1.12 rejects, are accepted."},
			{Name: temporalCode, Validate: codeIn(301, 302, 303, 307), Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "302",
				Doc:     "The status of temporal-redirect: 301, 302, 303 or 307. Does nothing without temporal-redirect.",
				Differs: "ingress-nginx takes 300 to 307 and silently uses 302 for other numbers, 308 included; with 300, 304, 305 or 306 nginx answers that status with the URL as body and no Location. Ramjet ignores every code but the four with a finding and uses 302; a value that is no number is ignored too, where ingress-nginx rejects the Ingress."},
		},
		Parse: parse,
	})
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	var target *config.Redirect
	switch {
	case values[temporal] != "":
		target = redirectTo(values, temporal, temporalCode, defaultTemporalCode)
		if losers := present(values, permanent, permanentCode); losers != "" {
			ctx.Note(core.InvalidAnnotation, "%s ignored: %s%s is also set and wins, as in ingress-nginx", losers, registry.Prefix, temporal)
		}
	case values[permanent] != "":
		target = redirectTo(values, permanent, permanentCode, defaultPermanentCode)
		if _, ok := values[temporalCode]; ok {
			ctx.Invalid(temporalCode, "does nothing without a valid %s%s", registry.Prefix, temporal)
		}
	default:
		for _, key := range []string{permanentCode, temporalCode} {
			if _, ok := values[key]; ok {
				ctx.Invalid(key, "does nothing without a valid %s%s", registry.Prefix, strings.TrimSuffix(key, "-code"))
			}
		}
		return nil
	}
	return func(s *core.Settings) { s.Redirect = target }
}

// redirectTo is the redirect of a URL key and its code key.
func redirectTo(values map[string]string, urlKey, codeKey string, code int) *config.Redirect {
	if v, ok := values[codeKey]; ok {
		code, _ = registry.ParseInt(v, 300, 399)
	}
	return &config.Redirect{URL: strings.TrimSpace(values[urlKey]), Code: code}
}

// present names the keys of values among keys, for a finding ("" for none).
func present(values map[string]string, keys ...string) string {
	var names []string
	for _, k := range keys {
		if _, ok := values[k]; ok {
			names = append(names, registry.Prefix+k)
		}
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0] + " is"
	}
	return strings.Join(names, " and ") + " are"
}

// codeIn returns a validator of redirect codes among codes.
func codeIn(codes ...int) func(string) error {
	return func(v string) error {
		n, err := registry.ParseInt(v, 300, 399)
		if err == nil {
			for _, c := range codes {
				if n == c {
					return nil
				}
			}
		}
		list := make([]string, len(codes))
		for i, c := range codes {
			list[i] = fmt.Sprint(c)
		}
		return fmt.Errorf("%s is not a redirect code this key takes (%s)", core.Quote(v), strings.Join(list, ", "))
	}
}

func validPermanent(v string) error { return validTarget(v, true) }
func validTemporal(v string) error  { return validTarget(v, false) }

// nginxVariable finds an nginx variable ($name or ${name}).
var nginxVariable = regexp.MustCompile(`\$(\{[A-Za-z0-9_]*\}?|[A-Za-z0-9_]+)`)

// validTarget checks a redirect URL: an absolute http or https URL with a
// host, or (pathOK) a path starting with one "/". It is sent literally as
// the Location header, so it must be a URL without characters a URL cannot
// hold unencoded; "$" is refused since nginx would have read a variable.
func validTarget(v string, pathOK bool) error {
	v = strings.TrimSpace(v)
	want := "an absolute http or https URL"
	if pathOK {
		want += ", or a path starting with /"
	}
	if strings.Contains(v, "$") {
		what := "$"
		if name := nginxVariable.FindString(v); name != "" {
			what = "the nginx variable " + name
		}
		return fmt.Errorf("%s holds %s: Ramjet does not interpolate nginx variables; the URL is used literally, without the request's path", core.Quote(v), what)
	}
	for _, c := range []byte(v) {
		switch {
		case c == ' ' || c == '\t':
			return fmt.Errorf("%s holds whitespace; percent-encode a space as %%20", core.Quote(v))
		case c >= 0x80:
			return fmt.Errorf("%s holds characters outside ASCII; percent-encode them (a host in its xn-- form)", core.Quote(v))
		case strings.IndexByte(`"<>\^`+"`{|}", c) >= 0:
			return fmt.Errorf("%s holds %q, which a URL cannot hold unencoded; percent-encode it", core.Quote(v), rune(c))
		}
	}
	if err := config.ValidateHeaderValue(v); err != nil {
		return fmt.Errorf("%s: %v", core.Quote(v), err)
	}
	u, err := url.Parse(v)
	switch {
	case err != nil:
		return fmt.Errorf("%s is not a URL (%s; a %% starts an escape such as %%20)", core.Quote(v), want)
	case strings.HasPrefix(v, "//"):
		return fmt.Errorf("%s starts with //, which clients read as another host; write %s", core.Quote(v), want)
	case strings.HasPrefix(v, "/") && pathOK:
		return nil
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%s must be %s", core.Quote(v), want)
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("%s has no host; write %s", core.Quote(v), want)
	}
	return nil
}
