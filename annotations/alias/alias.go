// Package alias is the server-alias family: more names served like the
// object's hosts. The aliases of a host are those of the oldest served
// object of the namespace that owns it that sets the key, as ingress-nginx
// takes those of the host's first Ingress that has any; an alias never
// takes a name from a host, another alias or another namespace.
package alias

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

// Key is the annotation key, without the prefix.
const Key = "server-alias"

func init() {
	registry.Register(&registry.Family{
		Name: "alias",
		Doc:  "More host names served like the object's hosts.",
		Keys: []registry.Key{
			{Name: Key, Validate: validate, Risk: registry.RiskHigh, Scope: registry.ScopeHost, List: true,
				Doc: "A comma list of names served exactly like every host of the object (its routes, default backend, HTTPS redirect and policies): exact names, or *.example.com for every name of one or more labels under example.com (nginx's server_name wildcard). Names are compared without case. " +
					"Host-wide: the oldest object of the namespace that owns the host that sets the key decides. An alias covered by the host's certificate is served with it; one it does not cover is served over HTTPS with the default certificate (a finding says so), as ingress-nginx does. " +
					"An alias is skipped with a finding when it is the host itself, a host of any object, an alias another (older) host took, or falls under a wildcard host of another namespace: an alias never takes a name from anyone, and a host created later for the name takes it back.",
				Differs: "Regex names (~...), wildcards at the end (www.example.*) and the .example.com form of nginx's server_name are refused with a finding (list example.com,*.example.com for the last); the other aliases of the value are served. " +
					"Only objects of the namespace that owns the host set its aliases (ingress-nginx: the first Ingress of any namespace with a rule for it), and a name under another namespace's wildcard host is refused. " +
					"On a host that asks for client certificates an alias its certificate does not cover is not served (it would be served without them). " +
					"On a host with ssl-passthrough, TLS connections for its aliases are spliced too (ingress-nginx splices only the host's own name and terminates the aliases' connections). " +
					"An object with several hosts gives its aliases to the first of them only (oldest owner, then by name), the others get a finding; nginx would warn of a conflicting server name and serve the first. " +
					"ingress-nginx skips an alias equal to a host silently; Ramjet reports it."},
		},
		Parse: parse,
	})
}

// chars are the characters ingress-nginx's validator (IsValidRegex)
// allows in a server name; a value with others is refused whole, as there.
var chars = regexp.MustCompile(`^[-._~a-zA-Z0-9/:^$\[\](){}*+?|&=\\]*$`)

func validate(v string) error {
	for _, a := range registry.SplitList(v) {
		if !chars.MatchString(a) {
			return fmt.Errorf("%s is not a server name", core.Quote(a))
		}
	}
	return nil
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	v, ok := values[Key]
	if !ok {
		return nil
	}
	var aliases []string
	for _, a := range registry.SplitList(v) {
		name, err := aliasName(a)
		if err != nil {
			ctx.Note(core.InvalidAnnotation, "%s%s: %s %s; this alias is ignored", registry.Prefix, Key, core.Quote(a), err)
			continue
		}
		if !slices.Contains(aliases, name) {
			aliases = append(aliases, name)
		}
	}
	if len(aliases) == 0 {
		return nil
	}
	slices.Sort(aliases)
	return func(s *core.Settings) { s.Aliases = aliases }
}

// aliasName is an alias as served: lower case, checked as a domain name
// whose wildcard, if any, is the whole left-most label.
func aliasName(a string) (string, error) {
	switch {
	case strings.HasPrefix(a, "~"):
		return "", fmt.Errorf("is a regex; regex server names are not served")
	case strings.HasPrefix(a, "."):
		return "", fmt.Errorf("is nginx's .name form; list the name and *.name instead")
	case strings.HasSuffix(a, ".*"):
		return "", fmt.Errorf("ends in a wildcard; only *. as the left-most label is served")
	case strings.HasPrefix(a, "**."):
		return "", fmt.Errorf("is not a domain name: '*' may only be the whole left-most label")
	}
	name := strings.ToLower(a)
	if err := config.ValidateDomain(name); err != nil {
		return "", fmt.Errorf("is not a domain name: %s", strings.TrimPrefix(err.Error(), fmt.Sprintf("%q is not a domain name: ", name)))
	}
	return name, nil
}
