// Package ingress is the Ingress input: it turns the networking.k8s.io/v1
// Ingresses of a snapshot that this controller serves into contributions,
// with their annotations applied by the enabled families, their backends
// resolved to the ready addresses of EndpointSlices and their TLS Secrets
// checked with the data plane's certificate loader.
package ingress

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
	"github.com/ramjet-dev/ramjet/sources/input"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// Name is the input's name, as the --ingress flag enables it.
const Name = "ingress"

func init() {
	registry.RegisterInput(&registry.Input{Name: Name, DefaultOn: true,
		Doc: "networking.k8s.io/v1 Ingresses with nginx.ingress.kubernetes.io annotations."})
}

// Defaults of Options.
const (
	DefaultIngressClass    = "ramjet"
	DefaultControllerClass = "ramjet.dev/ingress"
	// DefaultLimitStatus is ingress-nginx's limit-req-status-code and
	// limit-conn-status-code default.
	DefaultLimitStatus = 503
	// DefaultGlobalRateLimitStatus is ingress-nginx's
	// global-rate-limit-status-code default.
	DefaultGlobalRateLimitStatus = 429
)

// Options are the flags of the Ingress input.
type Options struct {
	// IngressClass is the value of the kubernetes.io/ingress.class
	// annotation this controller serves (--ingress-class).
	IngressClass string
	// ControllerClass is the spec.controller of the IngressClasses this
	// controller serves (--controller-class).
	ControllerClass string
	// WatchWithoutClass serves Ingresses that name no class
	// (--watch-ingress-without-class).
	WatchWithoutClass bool
	// AllowExternalName follows ExternalName Services
	// (--allow-external-name-services).
	AllowExternalName bool
	// BackendTLSVerify is --backend-tls-verify: which objects' members
	// reached over TLS are verified. Empty means VerifyAlways.
	BackendTLSVerify BackendTLSVerify
	// GlobalAuth is --global-auth-url: the external authentication of
	// every object without an auth-url of its own, unless it says
	// enable-global-auth: "false". Nil: none.
	GlobalAuth *config.ExternalAuth
	// AllowedResponseHeaders is --global-allowed-response-headers: the
	// header names custom-headers may set (matched exactly). Empty: none.
	AllowedResponseHeaders []string
	// LimitStatus is --limit-status-code: the status of the requests the
	// rate-limit family's limits refuse. Zero means DefaultLimitStatus.
	LimitStatus int
	// GlobalRateLimit serves the global-rate-limit family: the controller
	// has a memcached (--global-rate-limit-memcached-host). False drops the
	// limit with a finding and serves the rest of the object.
	GlobalRateLimit bool
	// GlobalRateLimitStatus is --global-rate-limit-status-code: the status
	// of the requests global limits refuse. Zero means
	// DefaultGlobalRateLimitStatus.
	GlobalRateLimitStatus int
	// SSLPassthrough serves ssl-passthrough (--enable-ssl-passthrough);
	// false ignores the key with a finding, as ingress-nginx does without
	// the flag.
	SSLPassthrough bool
	// Annotations are the enabled families.
	Annotations registry.Selection
	// AnnotationDefaults are --annotation-default: values of some keys
	// (ControllerDefaultKeys, without registry.Prefix) for the Ingresses
	// that do not have them, as ingress-nginx's ConfigMap sets them.
	AnnotationDefaults map[string]string
	// AssumeClasses are class names (ingressClassName or the annotation)
	// treated as this controller's: the translate command's way to show
	// what Ramjet would serve once Ingresses switch to it.
	AssumeClasses []string
}

// Translate turns the Ingresses of snap this controller serves into
// contributions, each translated alone, and lists the Ingresses of other
// controllers that name a class that does not exist.
func Translate(snap *snapshot.Snapshot, opts Options) ([]*core.Contribution, []input.Ignored) {
	var out []*core.Contribution
	var ignored []input.Ignored
	for _, ing := range snap.Ingresses {
		ours, classFinding, why := selectClass(snap, ing, opts)
		if !ours {
			if why != "" {
				ignored = append(ignored, input.Ignored{Kind: "Ingress", Object: snapshot.Key{Namespace: ing.Namespace, Name: ing.Name}, Reason: why})
			}
			continue
		}
		c := (&translation{snap: snap, opts: opts, ing: ing}).run()
		if classFinding != "" {
			c.Findings = append(c.Findings, core.Finding{Object: c.Origin, Reason: core.ClassConflict, Message: classFinding})
		}
		out = append(out, c)
	}
	return out, ignored
}

// OriginOf identifies an Ingress in contributions and findings.
func OriginOf(ing *networkingv1.Ingress) core.Origin {
	return core.Origin{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name, UID: string(ing.UID), Created: ing.CreationTimestamp.Time}
}

// translation is the work on one Ingress.
type translation struct {
	snap *snapshot.Snapshot
	opts Options
	ing  *networkingv1.Ingress
	c    *core.Contribution
	// tlsReported are the Services whose unverifiable members were
	// reported (checkBackendTLS).
	tlsReported map[snapshot.Key]bool
}

func (t *translation) run() *core.Contribution {
	t.c = &core.Contribution{Origin: OriginOf(t.ing)}
	applied := registry.Apply(t.opts.Annotations, t.c.Origin, withDefaults(t.ing.Annotations, t.opts.AnnotationDefaults), t.snap)
	t.c.Settings, t.c.Refused = applied.Settings, applied.Refused
	t.c.Findings = append(t.c.Findings, applied.Findings...)
	if t.rewritesAPath() {
		t.c.Settings.Regex = true
	}
	t.sslPassthrough()
	t.errorPages()
	t.backendTLS()
	t.limitStatus()
	t.customHeaders()
	t.mirrorTLS()
	t.globalRateLimit()
	t.globalAuth()
	t.externalAuthTLS()
	t.unservedCanary()
	t.rules()
	t.tls()
	if b := t.ing.Spec.DefaultBackend; b != nil {
		t.c.DefaultBackend = t.backend(b, "spec.defaultBackend")
	}
	return t.c
}

// sslPassthrough drops ssl-passthrough when the controller does not serve
// it (no --enable-ssl-passthrough): ingress-nginx then terminates the
// host's TLS connections too.
func (t *translation) sslPassthrough() {
	if !t.c.Settings.SSLPassthrough || t.opts.SSLPassthrough {
		return
	}
	t.c.Settings.SSLPassthrough = false
	t.note(core.UnknownAnnotation, "%sssl-passthrough is ignored: the controller runs without --enable-ssl-passthrough (chart value ingressController.enableSSLPassthrough), "+
		"so the TLS connections of the object's hosts are terminated with their certificate and the requests proxied as the other annotations say", registry.Prefix)
}

// canaryKey marks a canary Ingress.
const canaryKey = registry.Prefix + "canary"

// unservedCanary keeps an Ingress that says it is a canary from being
// served as a main Ingress when it cannot be served as a canary (the canary
// family is disabled, or the value is not a boolean): it would otherwise
// claim its paths, which are its main's, without the main's access control.
// Such an object is not served and claims nothing.
func (t *translation) unservedCanary() {
	v, ok := t.ing.Annotations[canaryKey]
	if !ok || t.c.Settings.Canary != nil {
		return
	}
	if b, err := registry.ParseBool(v); err == nil && !b {
		return // canary: "false" is an ordinary Ingress
	}
	t.c.Refused = true
	t.c.Settings.Canary = &core.Canary{}
	t.note(core.InvalidAnnotation, "%s is set but the object cannot be served as a canary (see the findings on its canary keys); it is not served, and claims no paths, so that it never takes its main route's requests without the main's settings", canaryKey)
}

// rewritesAPath reports whether the object's rewrite-target rewrites one
// of its paths, which makes its paths regexes as in ingress-nginx. A target
// equal to every path (rewrite-target: / on path: /, common in copied
// manifests) rewrites nothing and leaves the paths as they are.
func (t *translation) rewritesAPath() bool {
	rw := t.c.Settings.Policies.Rewrite
	if rw == nil || rw.Path == "" {
		return false
	}
	for _, r := range t.ing.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		for _, p := range r.HTTP.Paths {
			if core.NeedsRewrite(rw.Path, pathOrRoot(p.Path)) {
				return true
			}
		}
	}
	return false
}

// pathOrRoot is a path as served: an empty path is "/".
func pathOrRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

func (t *translation) note(reason core.Reason, format string, args ...any) {
	t.c.Findings = append(t.c.Findings, core.Finding{Object: t.c.Origin, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// rules translates spec.rules: hosts are checked strictly (a port, a path
// or a misplaced * is refused, never guessed), path types mapped
// (ImplementationSpecific is a prefix, as in ingress-nginx), and paths that
// could never match are left out with a finding.
func (t *translation) rules() {
	for i, r := range t.ing.Spec.Rules {
		if r.Host != "" {
			if reason := hostProblem(r.Host); reason != "" {
				t.note(core.InvalidConfiguration, "spec.rules[%d].host: %s %s; the rule is not served", i, core.Quote(r.Host), reason)
				continue
			}
		}
		rule := core.Rule{Host: r.Host}
		if r.HTTP != nil {
			for j, p := range r.HTTP.Paths {
				if path, ok := t.path(fmt.Sprintf("spec.rules[%d].http.paths[%d]", i, j), p); ok {
					rule.Paths = append(rule.Paths, path)
				}
			}
		}
		t.c.Rules = append(t.c.Rules, rule)
	}
}

// hostProblem says why a rule host cannot be served, "" when it can: it
// must be a domain name (Kubernetes refuses an IP address there) whose
// wildcard, if any, is one label: the data plane's "**." domains (one or
// more labels) are not Ingress hosts.
func hostProblem(host string) string {
	if isIPAddress(host) {
		return "is an IP address; a rule host must be a DNS name (Kubernetes refuses an address there)"
	}
	if strings.HasPrefix(host, "**.") {
		return "is not a domain name: '*' may only be the whole left-most label"
	}
	if err := config.ValidateDomain(host); err != nil {
		return strings.TrimPrefix(err.Error(), fmt.Sprintf("%q ", host))
	}
	return ""
}

// isIPAddress reports whether host is an IP address as Kubernetes reads
// one in a rule host: IPv6, or IPv4 with leading zeros allowed
// ("010.0.0.1").
func isIPAddress(host string) bool {
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	fields := strings.Split(host, ".")
	if len(fields) != 4 {
		return false
	}
	for _, f := range fields {
		n, err := strconv.ParseUint(f, 10, 16)
		if err != nil || n > 255 {
			return false
		}
	}
	return true
}

func (t *translation) path(field string, p networkingv1.HTTPIngressPath) (core.Path, bool) {
	path := core.Path{Path: pathOrRoot(p.Path), Type: pathType(p.PathType)}
	if p.PathType != nil && path.Type == core.PathImplementationSpecific && *p.PathType != networkingv1.PathTypeImplementationSpecific {
		t.note(core.UnknownPathType, "%s: path type %s is unknown; it is served as ImplementationSpecific (a prefix)", field, core.Quote(string(*p.PathType)))
	}
	if !t.c.Settings.Regex {
		if err := config.ValidateRoutePath(path.Path); err != nil {
			t.note(core.InvalidConfiguration, "%s: path %s %v; it is not served", field, core.Quote(path.Path), err)
			return path, false
		}
	} else if hasControl(path.Path) {
		t.note(core.InvalidConfiguration, "%s: path %s is matched as a regular expression (use-regex or rewrite-target) and must not hold control characters (a line break, a tab), as any path; it is not served", field, core.Quote(path.Path))
		return path, false
	} else if _, err := config.CompilePathRegex(path.Path); err != nil {
		// A broken regex is a broken Ingress, as ingress-nginx's admission
		// sees it: the object is refused (its other paths answer 404)
		// rather than served without one of its paths.
		t.c.Refused = true
		t.note(core.InvalidConfiguration, "%s: path %s is matched as a regular expression (use-regex or rewrite-target) and is not a valid one: %v; the Ingress is not served", field, core.Quote(path.Path), err)
		return path, false
	}
	path.Backend = t.backend(&p.Backend, field+".backend")
	return path, true
}

// hasControl reports whether a path holds a control character, which no
// path may hold (config.ValidateRoutePath refuses them in the others).
func hasControl(p string) bool {
	return strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// pathType maps the Ingress path type; nil and unknown types are
// ImplementationSpecific.
func pathType(pt *networkingv1.PathType) core.PathType {
	if pt == nil {
		return core.PathImplementationSpecific
	}
	switch *pt {
	case networkingv1.PathTypeExact:
		return core.PathExact
	case networkingv1.PathTypePrefix:
		return core.PathPrefix
	}
	return core.PathImplementationSpecific
}

// globalRateLimit drops the global rate limit when the controller has no
// memcached (ingress-nginx's Lua skips it then), and sets the status of
// its refusals from --global-rate-limit-status-code; 429, the data plane's
// default, is left unwritten.
func (t *translation) globalRateLimit() {
	g := t.c.Settings.Policies.GlobalRateLimit
	switch {
	case g == nil:
		return
	case !t.opts.GlobalRateLimit:
		t.c.Settings.Policies.GlobalRateLimit = nil
		t.note(core.UnknownAnnotation, "%sglobal-rate-limit is not served: the controller runs without --global-rate-limit-memcached-host (chart value ingressController.globalRateLimit.memcachedHost), "+
			"so requests are not limited globally; the rest of the object is served", registry.Prefix)
	case t.opts.GlobalRateLimitStatus != 0 && t.opts.GlobalRateLimitStatus != DefaultGlobalRateLimitStatus:
		g.Status = t.opts.GlobalRateLimitStatus
	}
}

// limitStatus sets the status of the rate limits' refusals from
// --limit-status-code; 503, the data plane's default, is left unwritten.
// customHeaders sets the response headers of custom-headers when the
// controller's allow list holds every name; otherwise the object is not
// served, as ingress-nginx denies its paths.
func (t *translation) customHeaders() {
	s := &t.c.Settings
	custom := s.CustomHeaders
	if custom == nil {
		return
	}
	s.CustomHeaders = nil
	for _, h := range custom.Headers {
		if !slices.Contains(t.opts.AllowedResponseHeaders, h.Name) {
			t.c.Refused = true
			t.note(core.InvalidAnnotation, "%scustom-headers: ConfigMap %s, entry %s: the header is not in the controller's --global-allowed-response-headers "+
				"(chart value ingressController.globalAllowedResponseHeaders); the object is not served", registry.Prefix, core.Quote(custom.ConfigMap), core.Quote(h.Name))
			return
		}
	}
	if t.c.Refused {
		return
	}
	s.Policies.ResponseHeaders = &config.HeaderChanges{Set: custom.Headers}
}

// mirrorTLS leaves an https mirror-target unverified under
// --backend-tls-verify=annotated: ingress-nginx does not verify it (the
// proxy-ssl-* keys configure the object's members, not the mirror).
func (t *translation) mirrorTLS() {
	if m := t.c.Settings.Mirror; m != nil && m.Scheme.UsesTLS() && t.opts.BackendTLSVerify == VerifyAnnotated {
		m.SkipVerify = true
	}
}

func (t *translation) limitStatus() {
	rl := t.c.Settings.Policies.RateLimit
	if rl == nil || !rl.Counts() || t.opts.LimitStatus == 0 || t.opts.LimitStatus == DefaultLimitStatus {
		return
	}
	rl.Status = t.opts.LimitStatus
}
