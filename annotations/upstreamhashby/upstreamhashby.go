// Package upstreamhashby is the upstream-hash-by family: the pools of the
// object's paths balance by consistent hashing of one request property,
// written as the nginx variable ingress-nginx takes ($remote_addr,
// $http_<name>, $cookie_<name>, $request_uri). ramjetd hashes typed keys,
// not nginx expressions, so any other expression is invalid. With
// upstream-hash-by-subset the key picks a subset of members, and a random
// member of it serves the request. Cookie affinity takes precedence;
// load-balance yields to this family.
package upstreamhashby

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

func init() {
	registry.Register(&registry.Family{
		Name: "upstream-hash-by",
		Doc:  "Balancing by consistent hashing of the client address, a header, a cookie or the request URI.",
		Keys: []registry.Key{
			{Name: "upstream-hash-by", Validate: validExpression, Risk: registry.RiskHigh, Scope: registry.ScopeBackend,
				Doc: "One nginx variable, also written ${name}: $remote_addr (the client address), $http_<name> (a request header: $http_x_user_id is X-User-Id), " +
					"$cookie_<name> (a cookie the application sets; ramjetd never sets it) or $request_uri (path and query). Ignored when affinity: cookie is set.",
				Differs: "Only these variables, each alone ($binary_remote_addr counts as $remote_addr), where nginx hashes any expression: other variables, combinations and $http_host are invalid. " +
					"A request without the header or cookie goes to a random member (nginx hashes the empty value, sending all such requests to one member); the cookie's name is matched case-sensitively (nginx ignores case). " +
					"ingress-nginx applies the oldest Ingress's value to every Ingress of the Service port; Ramjet gives each settings combination its own pool. " +
					"An invalid value is ignored with a finding, where ingress-nginx rejects the Ingress."},
			{Name: "upstream-hash-by-subset", Validate: registry.Bool, Risk: registry.RiskLow, Scope: registry.ScopeBackend, Default: "false",
				Doc:     "true: the members, in their order, are cut into subsets of upstream-hash-by-subset-size (the last one filled up with the first members); each key is hashed onto a ring of the subsets and the request goes to a random member of its subset. Only with upstream-hash-by.",
				Differs: "ramjetd's members are in the order the controller sends them (sorted by address), so the subsets may group other members than ingress-nginx's; a retry goes to another member of the subset, then to any untried member. An invalid value is ignored with a finding, where ingress-nginx rejects the Ingress."},
			{Name: "upstream-hash-by-subset-size", Validate: registry.Trimmed(registry.Int(1, config.MaxSubsetSize)), Risk: registry.RiskLow, Scope: registry.ScopeBackend, Default: "3",
				Doc:     "The number of members of each subset, 1 to 1000; a size above the member count makes one subset of every member. Only with upstream-hash-by-subset: true.",
				Differs: "0, negative values and values above 1000 are invalid (ignored with a finding: the size stays 3), where ingress-nginx takes any integer and rejects the Ingress for other text."},
		},
		Parse: parse,
	})
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	subset := registry.IsTrue(values["upstream-hash-by-subset"])
	if _, ok := values["upstream-hash-by-subset-size"]; ok && !subset {
		ctx.Invalid("upstream-hash-by-subset-size", "only applies with %supstream-hash-by-subset: \"true\"", registry.Prefix)
	}
	if _, ok := values["upstream-hash-by"]; !ok {
		if _, ok := values["upstream-hash-by-subset"]; ok {
			ctx.Invalid("upstream-hash-by-subset", "only applies with %supstream-hash-by", registry.Prefix)
		}
		return nil
	}
	if _, ok := ctx.Value("affinity"); ok {
		ctx.Invalid("upstream-hash-by", "%saffinity: cookie is set and takes precedence, as in ingress-nginx", registry.Prefix)
		return nil
	}
	hash, err := expression(values["upstream-hash-by"])
	if err != nil { // validated at Apply
		return nil
	}
	if subset {
		hash.SubsetSize = 3
		if v, ok := values["upstream-hash-by-subset-size"]; ok {
			hash.SubsetSize, _ = registry.ParseInt(v, 1, config.MaxSubsetSize)
		}
	}
	return func(s *core.Settings) {
		s.Pool.Balance = config.BalanceHash
		s.Pool.Hash = hash
	}
}

// variable is a whole expression of one variable: $name or ${name}, with
// the characters nginx's (and ingress-nginx's Lua) variable names hold.
var variable = regexp.MustCompile(`^\$(?:([A-Za-z0-9_]+)|\{([A-Za-z0-9_]+)\})$`)

// supported lists the expressions Ramjet takes, for findings.
const supported = "$remote_addr (the client address), $http_<name> (a request header, the name in lower case with _ for -, such as $http_x_user_id), $cookie_<name> (a cookie) or $request_uri (path and query), alone, also written ${name}"

// expression returns the hash key of an upstream-hash-by value.
func expression(v string) (*config.Hash, error) {
	unsupported := fmt.Errorf("%s is not an expression Ramjet can hash: use %s", core.Quote(v), supported)
	m := variable.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		return nil, unsupported
	}
	name := m[1] + m[2]
	// nginx's variable names are case-insensitive.
	lower := strings.ToLower(name)
	switch {
	case lower == "remote_addr" || lower == "binary_remote_addr":
		return &config.Hash{By: config.HashByClientIP}, nil
	case lower == "request_uri":
		return &config.Hash{By: config.HashByRequestURI}, nil
	case lower == "http_host":
		return nil, fmt.Errorf("%s: ramjetd does not hash the Host header (it selects the route); use %s", core.Quote(v), supported)
	case strings.HasPrefix(lower, "http_") && len(name) > len("http_"):
		// nginx's $http_x_user_id is the header X-User-Id. The variable's
		// characters are all token characters, so the name is valid.
		header := http.CanonicalHeaderKey(strings.ReplaceAll(name[len("http_"):], "_", "-"))
		return &config.Hash{By: config.HashByHeader, Header: header}, nil
	case strings.HasPrefix(lower, "cookie_") && len(name) > len("cookie_"):
		return &config.Hash{By: config.HashByCookieValue, CookieName: name[len("cookie_"):]}, nil
	}
	return nil, unsupported
}

func validExpression(v string) error {
	_, err := expression(v)
	return err
}
