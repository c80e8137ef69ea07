package ingress

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
)

// ControllerDefaultKeys are the annotation keys whose value for every
// Ingress without the annotation the controller's --annotation-default
// sets: those whose default ingress-nginx's ConfigMap key of the same name
// sets for every location.
var ControllerDefaultKeys = []string{
	"proxy-connect-timeout", "proxy-read-timeout", "proxy-send-timeout",
	"proxy-buffering", "proxy-request-buffering", "proxy-buffer-size",
	"proxy-cookie-path", "proxy-cookie-domain", "proxy-redirect-from", "proxy-redirect-to",
	"proxy-next-upstream", "proxy-next-upstream-timeout", "proxy-next-upstream-tries",
	"ssl-redirect", "force-ssl-redirect", "use-port-in-redirects", "preserve-trailing-slash",
	"load-balance", "upstream-hash-by", "upstream-hash-by-subset", "upstream-hash-by-subset-size",
	"whitelist-source-range", "denylist-source-range", "limit-rate", "limit-rate-after", "service-upstream",
	"custom-http-errors", "disable-proxy-intercept-errors",
}

// ParseAnnotationDefaults checks the --annotation-default flags, each
// KEY=VALUE with KEY one of ControllerDefaultKeys (with or without
// registry.Prefix) of a family sel enables, and VALUE valid for it.
func ParseAnnotationDefaults(specs []string, sel registry.Selection) (map[string]string, error) {
	defaults := map[string]string{}
	for _, spec := range specs {
		key, value, ok := strings.Cut(spec, "=")
		key = strings.TrimPrefix(strings.TrimSpace(key), registry.Prefix)
		if err := checkDefault(key, value, ok, sel); err != nil {
			return nil, fmt.Errorf("--annotation-default %q: %w", spec, err)
		}
		defaults[key] = value
	}
	return defaults, nil
}

func checkDefault(key, value string, hasValue bool, sel registry.Selection) error {
	switch {
	case !hasValue:
		return fmt.Errorf("not KEY=VALUE")
	case !slices.Contains(ControllerDefaultKeys, key):
		return fmt.Errorf("%s is not a key whose default the controller sets (%s)", core.Quote(key), strings.Join(ControllerDefaultKeys, ", "))
	}
	if f := registry.Owner(key); f == nil || !sel.Enabled(f.Name) {
		return fmt.Errorf("the family of %s is not enabled (--annotations)", key)
	}
	return registry.CheckValue(key, value)
}

// withDefaults returns the annotations of an Ingress with the
// controller's defaults for the keys it does not have; annotations itself
// when it has them all.
func withDefaults(annotations, defaults map[string]string) map[string]string {
	var out map[string]string
	for key, value := range defaults {
		full := registry.Prefix + key
		if _, ok := annotations[full]; ok {
			continue
		}
		if out == nil {
			out = maps.Clone(annotations)
			if out == nil {
				out = map[string]string{}
			}
		}
		out[full] = value
	}
	if out == nil {
		return annotations
	}
	return out
}
