package upstreamvhost_test

import (
	"strings"
	"testing"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

var origin = core.Origin{Kind: "Ingress", Namespace: "shop", Name: "web"}

const key = registry.Prefix + "upstream-vhost"

func TestUpstreamVhost(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string // keys without the prefix
		want        *config.Rewrite
		// problem is part of the InvalidAnnotation message; "" for none.
		problem string
	}{
		{name: "absent", annotations: map[string]string{}},
		{name: "host", annotations: map[string]string{"upstream-vhost": "api.internal.example"}, want: &config.Rewrite{Host: "api.internal.example"}},
		{name: "case is kept", annotations: map[string]string{"upstream-vhost": "API.Internal.Example"}, want: &config.Rewrite{Host: "API.Internal.Example"}},
		{name: "spaces are trimmed", annotations: map[string]string{"upstream-vhost": " api.internal.example "}, want: &config.Rewrite{Host: "api.internal.example"}},
		{name: "host and port", annotations: map[string]string{"upstream-vhost": "api.internal.example:8080"}, want: &config.Rewrite{Host: "api.internal.example:8080"}},
		{name: "highest port", annotations: map[string]string{"upstream-vhost": "a:65535"}, want: &config.Rewrite{Host: "a:65535"}},
		{name: "IPv4", annotations: map[string]string{"upstream-vhost": "10.0.0.1"}, want: &config.Rewrite{Host: "10.0.0.1"}},
		{name: "IPv4 and port", annotations: map[string]string{"upstream-vhost": "10.0.0.1:80"}, want: &config.Rewrite{Host: "10.0.0.1:80"}},
		{name: "IPv6", annotations: map[string]string{"upstream-vhost": "[fd00::1]"}, want: &config.Rewrite{Host: "[fd00::1]"}},
		{name: "IPv6 and port", annotations: map[string]string{"upstream-vhost": "[fd00::1]:443"}, want: &config.Rewrite{Host: "[fd00::1]:443"}},
		{name: "service DNS name", annotations: map[string]string{"upstream-vhost": "web.shop.svc.cluster.local"}, want: &config.Rewrite{Host: "web.shop.svc.cluster.local"}},
		{name: "with rewrite-target", annotations: map[string]string{"upstream-vhost": "api.internal.example", "rewrite-target": "/v2/$1"},
			want: &config.Rewrite{Path: "/v2/$1", Host: "api.internal.example"}},
		{name: "rewrite-target alone", annotations: map[string]string{"rewrite-target": "/"}, want: &config.Rewrite{Path: "/"}},
		{name: "invalid rewrite-target keeps the host", annotations: map[string]string{"upstream-vhost": "a.example", "rewrite-target": "relative"},
			want: &config.Rewrite{Host: "a.example"}, problem: "rewrite-target: "},

		{name: "nginx variables", annotations: map[string]string{"upstream-vhost": "$service_name.$namespace.svc.cluster.local"},
			problem: `upstream-vhost: "$service_name.$namespace.svc.cluster.local" holds a $: nginx variables such as $service_name are not interpolated`},
		{name: "nginx variable with braces", annotations: map[string]string{"upstream-vhost": "${host}"}, problem: `"${host}" holds a $`},
		{name: "invalid host keeps rewrite-target", annotations: map[string]string{"upstream-vhost": "$host", "rewrite-target": "/"},
			want: &config.Rewrite{Path: "/"}, problem: `"$host" holds a $`},
		{name: "wildcard", annotations: map[string]string{"upstream-vhost": "*.example.com"}, problem: `"*.example.com" is a wildcard`},
		{name: "empty", annotations: map[string]string{"upstream-vhost": ""}, problem: `"" is not a DNS name`},
		{name: "unbracketed IPv6", annotations: map[string]string{"upstream-vhost": "fd00::1"}, problem: `"fd00::1" is not host or host:port (an IPv6 address goes in brackets)`},
		{name: "bracketed IPv4", annotations: map[string]string{"upstream-vhost": "[10.0.0.1]:80"}, problem: "an IPv4 address goes without brackets"},
		{name: "IPv6 zone", annotations: map[string]string{"upstream-vhost": "[fe80::1%eth0]"}, problem: "without zone"},
		{name: "bracketed name", annotations: map[string]string{"upstream-vhost": "[example.com]"}, problem: `"[example.com]" is not a DNS name`},
		{name: "port 0", annotations: map[string]string{"upstream-vhost": "a.example:0"}, problem: `"a.example:0": the port must be 1..65535`},
		{name: "port too high", annotations: map[string]string{"upstream-vhost": "a.example:65536"}, problem: "the port must be 1..65535"},
		{name: "empty port", annotations: map[string]string{"upstream-vhost": "a.example:"}, problem: "the port must be 1..65535"},
		{name: "named port", annotations: map[string]string{"upstream-vhost": "a.example:http"}, problem: "the port must be 1..65535"},
		{name: "URL", annotations: map[string]string{"upstream-vhost": "http://a.example"}, problem: `"http://a.example" is not host or host:port: it holds a scheme`},
		{name: "path", annotations: map[string]string{"upstream-vhost": "a.example/x"}, problem: "it holds a scheme, path, user or space"},
		{name: "space inside", annotations: map[string]string{"upstream-vhost": "a example"}, problem: "it holds a scheme, path, user or space"},
		{name: "underscore", annotations: map[string]string{"upstream-vhost": "a_b.example"}, problem: "is not a DNS name"},
		{name: "trailing dot", annotations: map[string]string{"upstream-vhost": "a.example."}, problem: "is not a DNS name"},
		{name: "CRLF injection", annotations: map[string]string{"upstream-vhost": "a.example\r\nX-Evil: 1"}, problem: "control characters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			annotations := map[string]string{}
			for k, v := range tc.annotations {
				annotations[registry.Prefix+k] = v
			}
			got := registry.Apply(registry.All(), origin, annotations, nil)
			rw := got.Settings.Policies.Rewrite
			if (rw == nil) != (tc.want == nil) || rw != nil && *rw != *tc.want {
				t.Errorf("rewrite = %+v, want %+v", rw, tc.want)
			}
			checkFinding(t, got.Findings, tc.problem)
			if rw != nil && rw.Host != "" {
				if err := dataPlaneAccepts(rw.Host); err != nil {
					t.Errorf("the data plane refuses host %q: %v", rw.Host, err)
				}
			}
		})
	}
}

func checkFinding(t *testing.T, findings []core.Finding, problem string) {
	t.Helper()
	if problem == "" {
		if len(findings) != 0 {
			t.Errorf("findings = %v, want none", findings)
		}
		return
	}
	if len(findings) != 1 || findings[0].Reason != core.InvalidAnnotation || !strings.Contains(findings[0].Message, problem) ||
		!strings.HasSuffix(findings[0].Message, "; the key is ignored") || findings[0].Object != origin {
		t.Errorf("findings = %v, want one InvalidAnnotation holding %q, the key ignored", findings, problem)
	}
}

// dataPlaneAccepts validates a route whose rewrite sets host, as the data
// plane does.
func dataPlaneAccepts(host string) error {
	c := &config.Config{
		Server: config.Server{Listeners: map[string]*config.Listener{"http": {Address: ":80"}}},
		Tenants: map[string]*config.Tenant{"t": {
			Pools: map[string]*config.Pool{"p": {Members: []config.Member{{Address: "10.0.0.1:80"}}}},
			Applications: map[string]*config.Application{"a": {Domains: []string{"example.com"},
				Routes: []*config.Route{{Match: config.Match{Path: config.PathMatch{Prefix: "/"}}, Action: config.Action{Pool: "p"},
					Policies: &config.Policies{Rewrite: &config.Rewrite{Host: host}}}}}},
		}},
	}
	return c.Validate()
}

// TestHostsTheDataPlaneAccepts checks the validator against the data
// plane's own validation of rewrite.host over awkward values: every host
// the family accepts is one the data plane accepts.
func TestHostsTheDataPlaneAccepts(t *testing.T) {
	hosts := []string{"a", "a:1", "A.B", "1.2.3.4", "1.2.3.04", "[::1]", "[::1]:1", "[::ffff:1.2.3.4]", "[::1", "::1]", "[]", "[]:80",
		":80", "a:", "a:b:c", "a::80", "-a", "a-", "a..b", "é.example", "xn--bcher-kva.example", "[1.2.3.4]", "1.2.3.4:65535", "a:+80", "a:080"}
	for _, h := range hosts {
		got := registry.Apply(registry.All(), origin, map[string]string{key: h}, nil)
		rw := got.Settings.Policies.Rewrite
		if rw == nil {
			continue
		}
		if err := dataPlaneAccepts(rw.Host); err != nil {
			t.Errorf("%q: accepted as %q, which the data plane refuses: %v", h, rw.Host, err)
		}
	}
}
