// Package cors is the cors family: enable-cors and the cors-* keys become
// the route's CORS policy (policies.cors), with ingress-nginx's defaults.
// Without enable-cors: "true" the other keys do nothing, with a finding.
//
// Two deviations keep a mistake from widening access. An invalid
// cors-allow-origin turns CORS off for the object (no CORS headers, so
// browsers refuse cross-origin reads) where ingress-nginx falls back to
// "*". Credentials are never allowed for the origins "*" and "null":
// ingress-nginx's default (credentials on) is dropped silently with "*",
// whose credentialed answers browsers refuse anyway, and with a finding
// otherwise.
package cors

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	corspolicy "github.com/ramjet-dev/ramjet/policies/cors"
	"github.com/ramjet-dev/ramjet/registry"
)

const (
	enableKey      = "enable-cors"
	originKey      = "cors-allow-origin"
	methodsKey     = "cors-allow-methods"
	headersKey     = "cors-allow-headers"
	exposeKey      = "cors-expose-headers"
	credentialsKey = "cors-allow-credentials"
	maxAgeKey      = "cors-max-age"
)

// sameAsWritten is how the lists' rendering differs from ingress-nginx's.
const sameAsWritten = `The list is sent joined with ", " rather than as written; entries may also be separated by spaces. ` + lineBreaks

// lineBreaks is how every list reads line breaks.
const lineBreaks = "Line breaks may surround the entries (a YAML block, one entry per line, each but the last ending in a comma); " +
	"entries separated by a line break alone are invalid (ingress-nginx writes the line break into the header)."

func init() {
	registry.Register(&registry.Family{
		Name: "cors",
		Doc:  "Cross-origin resource sharing: preflight answers and CORS headers.",
		Keys: []registry.Key{
			{Name: enableKey, Validate: registry.Bool, Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "false",
				Doc: `"true" turns CORS on for every path: preflights (OPTIONS) from allowed origins get 204 without reaching the member, and answers to them get the CORS headers, replacing the member's.`,
				Differs: "Preflights are answered after the HTTPS redirect and the source-range check, where ingress-nginx answers them before both: a plain-HTTP preflight to an HTTPS-only path gets 308, a refused client 403. " +
					`Other cors-* keys without enable-cors: "true" get a finding.`},
			// The origin list is checked by parse, not here: an invalid list
			// must turn CORS off, and a key refused at Apply would leave
			// parse with the default "*".
			{Name: originKey, Validate: registry.Any, List: true, Risk: registry.RiskMedium, Scope: registry.ScopeIngress, Default: "*",
				Doc: "Comma-separated origins (scheme://host[:port], with *. as the first label for one label of any name, or null), or * for every origin; * anywhere means *. A matching Origin is echoed back.",
				Differs: "An invalid entry (a path, an upper-case scheme, no scheme) turns CORS off for the object, with a finding, where ingress-nginx falls back to * and so allows every origin. " +
					"Origins are matched anchored at both ends (nginx: at the end only), and answers for a list carry Vary: Origin. " + lineBreaks},
			{Name: methodsKey, Validate: names("method", isLetter, false), List: true, Risk: registry.RiskMedium, Scope: registry.ScopeIngress, Default: corspolicy.DefaultMethods,
				Doc:     "Comma-separated methods (letters only) for Access-Control-Allow-Methods; an invalid list keeps the default.",
				Differs: sameAsWritten},
			{Name: headersKey, Validate: names("header name", isHeaderChar, false), List: true, Risk: registry.RiskMedium, Scope: registry.ScopeIngress, Default: corspolicy.DefaultHeaders,
				Doc:     "Comma-separated request headers (letters, digits, - and _) for Access-Control-Allow-Headers; an invalid list keeps the default.",
				Differs: sameAsWritten},
			{Name: exposeKey, Validate: names("header name", isHeaderChar, true), List: true, Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc:     "Comma-separated response headers (or *) for Access-Control-Expose-Headers; none by default.",
				Differs: sameAsWritten},
			{Name: credentialsKey, Validate: registry.Bool, Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "true",
				Doc: "Sends Access-Control-Allow-Credentials: true; never with the origin * or null.",
				Differs: `With the origin * credentials are not sent (browsers refuse credentialed answers for * anyway): the default true is dropped silently, an explicit "true" gets a finding. ` +
					"A list holding null is served without credentials, with a finding: any page can send Origin: null from a sandboxed frame."},
			{Name: maxAgeKey, Validate: validMaxAge, Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: strconv.Itoa(corspolicy.DefaultMaxAge),
				Doc:     "How long browsers may cache a preflight answer, in seconds or like 24h; at most 365 days.",
				Differs: `"0" (no caching in ingress-nginx) is sent as 1 second, since ramjetd reads 0 as the default; Go-style durations are accepted besides whole seconds.`},
		},
		Parse: parse,
	})
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	if !registry.IsTrue(values[enableKey]) {
		withoutEnable(ctx, values)
		return nil
	}
	if ctx.Rejected(originKey) {
		ctx.Note(core.InvalidAnnotation, "CORS is off for this object because %s%s is invalid: its answers carry no CORS headers, so browsers refuse cross-origin reads (ingress-nginx would allow every origin)",
			registry.Prefix, originKey)
		return nil
	}
	origins := []string{"*"}
	if v, ok := values[originKey]; ok {
		var err error
		if origins, err = parseOrigins(v); err != nil {
			ctx.Note(core.InvalidAnnotation, "%s%s: %v; CORS is off for this object: its answers carry no CORS headers, so browsers refuse cross-origin reads (ingress-nginx would allow every origin)",
				registry.Prefix, originKey, err)
			return nil
		}
	}
	policy := &config.CORS{
		AllowOrigins:     origins,
		AllowMethods:     split(values[methodsKey]),
		AllowHeaders:     split(values[headersKey]),
		ExposeHeaders:    split(values[exposeKey]),
		AllowCredentials: credentials(ctx, values, origins),
	}
	if v, ok := values[maxAgeKey]; ok {
		d, _ := registry.ParseDuration(v)
		// ramjetd reads 0 as its default (20 days); 1s is the closest it
		// sends to ingress-nginx's 0.
		policy.MaxAge = config.Duration(max(d, time.Second))
	}
	return func(s *core.Settings) { s.Policies.CORS = policy }
}

// withoutEnable reports cors-* keys that do nothing because CORS is off.
func withoutEnable(ctx *registry.Context, values map[string]string) {
	keys := registry.Present(values, enableKey)
	if len(keys) == 0 {
		return
	}
	ctx.Note(core.InvalidAnnotation, "%s: no effect without %s%s: \"true\"; CORS is off for this object", strings.Join(keys, ", "), registry.Prefix, enableKey)
}

// credentials decides Access-Control-Allow-Credentials. ingress-nginx
// allows credentials unless told otherwise, even for "*"; ramjetd refuses
// them for "*" and "null".
func credentials(ctx *registry.Context, values map[string]string, origins []string) bool {
	v, explicit := values[credentialsKey]
	if explicit && !registry.IsTrue(v) {
		return false
	}
	switch {
	case origins[0] == "*" && explicit:
		ctx.Note(core.InvalidAnnotation, "%s%s: \"true\" cannot be honoured with the origin \"*\": browsers refuse credentials for \"*\", and allowing them would let any site read authenticated answers; CORS is served without credentials (list the origins to allow them)",
			registry.Prefix, credentialsKey)
		return false
	case origins[0] == "*":
		return false // browsers refuse credentials for "*": nothing observable changes
	case slices.Contains(origins, "null"):
		why := "allowed"
		if !explicit {
			why = "on by default in ingress-nginx"
		}
		ctx.Note(core.InvalidAnnotation, "%s%s lists \"null\": credentials (%s) are never allowed for it, since any page can send Origin: null from a sandboxed frame; CORS is served without credentials",
			registry.Prefix, originKey, why)
		return false
	}
	return true
}

// originRE is an allowed origin: what both ingress-nginx (a lower-case
// scheme of letters) and ramjetd's validation (a host of non-empty labels,
// the first of which may be "*", and a port of at most five digits) accept.
var originRE = regexp.MustCompile(`^[a-z]+://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:[0-9]{1,5})?$`)

// parseOrigins reads a comma-separated origin list. "*" anywhere stands for
// the whole list, as in ingress-nginx; any invalid entry makes the list
// invalid.
func parseOrigins(v string) ([]string, error) {
	var out []string
	for entry := range strings.SplitSeq(v, ",") {
		switch entry = strings.TrimSpace(entry); entry {
		case "":
			continue
		case "*":
			return []string{"*"}, nil
		}
		out = append(out, entry)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s lists no origin", core.Quote(v))
	}
	for _, o := range out {
		if o != "null" && !originRE.MatchString(o) {
			return nil, fmt.Errorf("%s is not an origin: %s", core.Quote(o), originProblem(o))
		}
	}
	return out, nil
}

// originProblem says what is wrong with an origin that is not one.
func originProblem(o string) string {
	scheme, rest, found := strings.Cut(o, "://")
	switch {
	case !found:
		return "a scheme is required, like https://app.example.com"
	case scheme != strings.ToLower(scheme):
		return "the scheme must be lower-case"
	case strings.Contains(rest, "/"):
		return "an origin has no path, write scheme://host[:port]"
	}
	return "write scheme://host[:port], with at most *. as the first label"
}

// split reads a validated list separated by commas or spaces; nil for an
// absent key, which keeps ramjetd's default.
func split(v string) []string {
	f := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	if len(f) == 0 {
		return nil
	}
	return f
}

// names returns a validator of lists of names made of the characters ok
// accepts (and "*" when star).
func names(what string, ok func(rune) bool, star bool) func(string) error {
	return func(v string) error {
		items := split(v)
		if len(items) == 0 {
			return fmt.Errorf("%s lists no %s", core.Quote(v), what)
		}
		for _, item := range items {
			if item == "*" && star {
				continue
			}
			if strings.IndexFunc(item, func(r rune) bool { return !ok(r) }) >= 0 {
				return fmt.Errorf("%s is not a %s", core.Quote(item), what)
			}
		}
		return nil
	}
}

func isLetter(r rune) bool { return r < unicode.MaxASCII && unicode.IsLetter(r) }

func isHeaderChar(r rune) bool { return isLetter(r) || '0' <= r && r <= '9' || r == '-' || r == '_' }

func validMaxAge(v string) error {
	d, err := registry.ParseDuration(v)
	if err != nil {
		return err
	}
	if d > config.MaxCORSMaxAge {
		return fmt.Errorf("%s is more than ramjetd allows (at most %d seconds, 365 days)", core.Quote(v), int64(config.MaxCORSMaxAge/time.Second))
	}
	return nil
}
