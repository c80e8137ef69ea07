// Package customheaders is the custom-headers family: the entries of a
// ConfigMap become response headers set on every answer of the object's
// paths (the route's response_headers), as ingress-nginx's
// more_set_headers. Which names may be set is the controller's
// --global-allowed-response-headers (ingress-nginx's
// global-allowed-response-headers): the family reads the ConfigMap and
// checks its entries, the Ingress input checks them against that list.
package customheaders

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

// Key is the family's one key.
const Key = "custom-headers"

// MaxHeaders bounds the entries of the ConfigMap.
const MaxHeaders = 64

func init() {
	registry.Register(&registry.Family{
		Name: "custom-headers",
		Doc:  "Response headers from a ConfigMap, set on every answer of the object's paths.",
		Keys: []registry.Key{
			{Name: Key, Names: registry.ConfigMap, Validate: registry.Trimmed(registry.ObjectName(registry.ConfigMap)), Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Doc: "A ConfigMap of the object's namespace (namespace/name, or name) whose entries (name: value) are response headers set on the answers of the object's paths " +
					"(the member's, whatever their status, and ramjetd's 502, 503 and 504 when forwarding fails), replacing a header of the same name the member sent. Only names the controller's --global-allowed-response-headers lists " +
					"(chart value ingressController.globalAllowedResponseHeaders; empty by default, as ingress-nginx's global-allowed-response-headers) may be set. " +
					"Names are letters, digits, '-' and '_'; values printable ASCII (a $ is sent as it is, never interpolated). " +
					"A ConfigMap that does not exist, an entry that is invalid or whose name the list does not hold makes the object not served (InvalidAnnotation naming the entry). " +
					"A change of the ConfigMap applies without touching the Ingress.",
				Differs: "A name alone is read in the object's namespace (ingress-nginx finds no ConfigMap without namespace/, and denies the paths); " +
					"a ConfigMap of another namespace is never read: the key is ignored (InvalidAnnotation). " +
					"A refused object's paths answer 404, not 503. Hop-by-hop and framing headers (Connection, Content-Length, Transfer-Encoding, ...) and more than 64 entries are refused " +
					"as well, and so are such names in --global-allowed-response-headers, which stops the controller at start. " +
					"The list is matched exactly, case included, as ingress-nginx does. " +
					"Answers ramjetd gives before forwarding (403 of whitelist-source-range, 401 of authentication, 413, ModSecurity's, the HTTPS redirect) do not carry the headers; " +
					"nginx's more_set_headers adds them to those too."},
		},
		Parse: parse,
	})
}

// parse reads the ConfigMap and checks its entries; the headers go into
// Settings.CustomHeaders for the input to check against the allow list.
func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	ref := strings.TrimSpace(values[Key])
	name, ok := ctx.Ref(registry.ConfigMap, Key, ref)
	if !ok {
		return nil
	}
	data, ok := ctx.ConfigMap(name)
	if !ok {
		refuse(ctx, "ConfigMap %s does not exist", core.Quote(name))
		return nil
	}
	headers, err := Headers(data)
	if err != nil {
		refuse(ctx, "ConfigMap %s: %v", core.Quote(name), err)
		return nil
	}
	if len(headers) == 0 {
		return nil
	}
	custom := &core.CustomHeaders{ConfigMap: name, Headers: headers}
	return func(s *core.Settings) { s.CustomHeaders = custom }
}

// refuse makes the object not served: ingress-nginx denies its paths when
// the ConfigMap cannot be used.
func refuse(ctx *registry.Context, format string, args ...any) {
	ctx.Refuse(core.InvalidAnnotation, "%s%s: %s; the object is not served", registry.Prefix, Key, fmt.Sprintf(format, args...))
}

// Headers turns the data of a ConfigMap into headers sorted by name, each
// checked as ingress-nginx checks them and as ramjetd checks
// response_headers. An error names the entry, never its value.
func Headers(data map[string]string) ([]config.Header, error) {
	if len(data) > MaxHeaders {
		return nil, fmt.Errorf("%d entries, at most %d headers are set", len(data), MaxHeaders)
	}
	out := make([]config.Header, 0, len(data))
	for _, name := range slices.Sorted(maps.Keys(data)) {
		value := data[name]
		if err := CheckName(name); err != nil {
			return nil, fmt.Errorf("entry %s: %w", core.Quote(name), err)
		}
		if !validValue(value) {
			return nil, fmt.Errorf("entry %s: the value must be printable ASCII (letters, digits, spaces and punctuation), not empty", core.Quote(name))
		}
		if err := config.CheckResponseHeader(name, value); err != nil {
			return nil, fmt.Errorf("entry %s: %w", core.Quote(name), err)
		}
		out = append(out, config.Header{Name: name, Value: value})
	}
	return out, nil
}

// CheckName checks a header name of a ConfigMap entry or of
// --global-allowed-response-headers: letters, digits, '-' and '_' (as
// ingress-nginx), and a name ramjetd lets response_headers set.
func CheckName(name string) error {
	if name == "" {
		return fmt.Errorf("a header name is required")
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("%s is not a header name of letters, digits, '-' and '_'", core.Quote(name))
		}
	}
	return config.CheckResponseHeader(name, "")
}

// validValue is ingress-nginx's rule for values: one or more printable
// ASCII characters (space included, tab not).
func validValue(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

// ParseAllowed checks --global-allowed-response-headers, a comma-separated
// list of header names (spaces around them trimmed, empty entries
// skipped).
func ParseAllowed(list string) ([]string, error) {
	names := registry.SplitList(list)
	for _, name := range names {
		if err := CheckName(name); err != nil {
			return nil, fmt.Errorf("--global-allowed-response-headers: %w", err)
		}
	}
	return names, nil
}
