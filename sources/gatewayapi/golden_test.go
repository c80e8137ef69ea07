package gatewayapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
	"github.com/ramjet-dev/ramjet/sources"
	"github.com/ramjet-dev/ramjet/sources/gatewayapi"
	"github.com/ramjet-dev/ramjet/sources/ingress"
	"github.com/ramjet-dev/ramjet/sources/input"
	"github.com/ramjet-dev/ramjet/sources/offline"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
	"github.com/ramjet-dev/ramjet/test/golden"
)

// TestGolden computes each testdata/<case>.txtar:
//
//	-- input.yaml --   the objects
//	-- options.yaml -- optional: features (supportedFeatures),
//	                   unaddressed (Gateways "ns/name" without an address;
//	                   every other Gateway has 198.18.0.1) and shared
//	                   (port: listener of the base; without it every
//	                   Gateway port gets a listener of its own) and
//	                   ingress (true: the Ingress input runs first, so
//	                   that Ingresses and routes share those listeners)
//	-- status.yaml --  the statuses (a route's with the conditions the
//	                   findings add) and each listener's tables (expected)
//	-- ramjet.yaml --  the listeners added and the tenant (expected)
//	-- findings --     the findings and the state of every object
//	                   (expected)
//
// go test -update rewrites the expected sections.
func TestGolden(t *testing.T) { golden.RunCases(t, "testdata/*.txtar", translate) }

type caseOptions struct {
	Features    []gatewayv1.FeatureName         `yaml:"features"`
	Unaddressed []string                        `yaml:"unaddressed"`
	Shared      map[gatewayv1.PortNumber]string `yaml:"shared"`
	Ingress     bool                            `yaml:"ingress"`
}

// testAddressing gives every Gateway the address 198.18.0.1 (but the
// unaddressed ones) and, unless ports are shared, a listener of its own
// per port at :10000 and up, in the order of Gateways and ports.
type testAddressing caseOptions

func (ta *testAddressing) Assign(snap *snapshot.Snapshot) map[snapshot.Key]gatewayapi.Assignment {
	ip := gatewayv1.IPAddressType
	out := map[snapshot.Key]gatewayapi.Assignment{}
	next := 10000
	gateways := slices.Clone(snap.Gateways)
	slices.SortFunc(gateways, func(a, b *gatewayv1.Gateway) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	for _, gw := range gateways {
		key := snapshot.Key{Namespace: gw.Namespace, Name: gw.Name}
		a := gatewayapi.Assignment{Ports: map[gatewayv1.PortNumber]gatewayapi.PortAssignment{}}
		if !slices.Contains(ta.Unaddressed, key.String()) {
			a.Addresses = []gatewayv1.GatewayStatusAddress{{Type: &ip, Value: "198.18.0.1"}}
		}
		for _, l := range gw.Spec.Listeners {
			switch {
			case ta.Shared != nil:
				if name, ok := ta.Shared[l.Port]; ok {
					a.Ports[l.Port] = gatewayapi.PortAssignment{Listener: name}
				}
			case a.Ports[l.Port] == (gatewayapi.PortAssignment{}):
				a.Ports[l.Port] = gatewayapi.PortAssignment{Listener: gatewayapi.OwnListener(key, l.Port), Address: fmt.Sprintf(":%d", next)}
				next++
			}
		}
		out[key] = a
	}
	return out
}

func translate(t *testing.T, a *golden.Archive) map[string]string {
	snap, notes, err := offline.Read([]string{"-"}, strings.NewReader(a.Get("input.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	if len(notes.Unreadable) > 0 || len(notes.Warnings) > 0 {
		t.Fatalf("input.yaml: %v %v", notes.Unreadable, notes.Warnings)
	}
	var co caseOptions
	if err := yaml.Unmarshal([]byte(a.Get("options.yaml")), &co); err != nil {
		t.Fatal(err)
	}
	ta := testAddressing(co)
	in := &gatewayapi.Input{Options: gatewayapi.Options{SupportedFeatures: co.Features}, Addressing: &ta}
	base := &config.Server{Listeners: map[string]*config.Listener{"http": {Address: ":80"}, "https": {Address: ":443", TLS: &config.ListenerTLS{}}}}
	opts := sources.Options{Inputs: []input.Input{in}}
	if co.Ingress {
		sel, err := registry.Select("all")
		if err != nil {
			t.Fatal(err)
		}
		ing := &ingress.Input{Options: ingress.Options{IngressClass: ingress.DefaultIngressClass,
			ControllerClass: ingress.DefaultControllerClass, Annotations: sel}}
		opts.Inputs = []input.Input{ing, in}
	}
	opts.Core.FileDir = "/etc/ramjet/generated"
	out := sources.Translate(snap, base, opts)
	if err := out.Config.Validate(); err != nil {
		t.Fatalf("the translation is not valid: %v", err)
	}
	res := out.Inputs[gatewayapi.Name].Detail.(*gatewayapi.Result)
	return map[string]string{"status.yaml": render(t, res, out.Findings), "ramjet.yaml": served(t, out, base), "findings": golden.FindingLines(out, notes)}
}

// served renders the listeners the translation added and the tenant.
func served(t *testing.T, out *sources.Output, base *config.Server) string {
	added := map[string]*config.Listener{}
	for name, l := range out.Config.Server.Listeners {
		if base.Listeners[name] == nil {
			added[name] = l
		}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	err := enc.Encode(struct {
		Listeners map[string]*config.Listener `yaml:"listeners,omitempty"`
		Tenant    *config.Tenant              `yaml:"tenant"`
	}{added, out.Config.Tenants[core.TenantName]})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// doc is one document of status.yaml.
type doc struct {
	Kind      string   `json:"kind"`
	Name      string   `json:"name"`
	Status    any      `json:"status,omitempty"`
	Listeners []tables `json:"listeners,omitempty"`
}

// tables are a listener's route tables, one line per entry.
type tables struct {
	Name       string   `json:"name"`
	Programmed bool     `json:"programmed"`
	Certs      []string `json:"certificates,omitempty"`
	Hosts      []host   `json:"hosts,omitempty"`
}

type host struct {
	Hostname string   `json:"hostname"`
	HTTP     []string `json:"http,omitempty"`
	GRPC     []string `json:"grpc,omitempty"`
}

func render(t *testing.T, res *gatewayapi.Result, findings []core.Finding) string {
	var docs []doc
	for _, c := range res.Classes {
		docs = append(docs, doc{Kind: "GatewayClass", Name: c.Class.Name, Status: c.Status})
	}
	for _, g := range res.Gateways {
		docs = append(docs, doc{Kind: "Gateway", Name: g.Gateway.Namespace + "/" + g.Gateway.Name, Status: g.Status})
	}
	for _, g := range res.Gateways {
		d := doc{Kind: "Tables", Name: g.Gateway.Namespace + "/" + g.Gateway.Name}
		for _, l := range g.Listeners {
			d.Listeners = append(d.Listeners, listenerTables(l))
		}
		docs = append(docs, d)
	}
	for _, r := range res.Routes {
		docs = append(docs, doc{Kind: r.Kind, Name: r.Namespace + "/" + r.Name, Status: gatewayv1.RouteStatus{Parents: r.ParentsWith(findings)}})
	}
	for _, p := range res.Policies {
		docs = append(docs, doc{Kind: "BackendTLSPolicy", Name: p.Policy.Namespace + "/" + p.Policy.Name, Status: p.Status})
	}
	var b bytes.Buffer
	for i, d := range docs {
		if i > 0 {
			b.WriteString("---\n")
		}
		b.WriteString(toYAML(t, d))
	}
	return b.String()
}

func listenerTables(l *gatewayapi.ListenerState) tables {
	out := tables{Name: string(l.Listener.Name), Programmed: l.Programmed}
	for _, c := range l.Certificates {
		out.Certs = append(out.Certs, c.Secret.String())
	}
	for _, h := range l.Hosts {
		oh := host{Hostname: h.Hostname}
		if oh.Hostname == "" {
			oh.Hostname = "(any)"
		}
		for _, e := range h.HTTP {
			oh.HTTP = append(oh.HTTP, fmt.Sprintf("%s: %s -> %s%s", ref(e.Ref), httpMatch(e.Match), backends(e.Rule.Backends), mirrors(e.Rule.Mirrors)))
		}
		for _, e := range h.GRPC {
			oh.GRPC = append(oh.GRPC, fmt.Sprintf("%s: %s -> %s%s", ref(e.Ref), grpcMatch(e.Match), backends(e.Rule.Backends), mirrors(e.Rule.Mirrors)))
		}
		out.Hosts = append(out.Hosts, oh)
	}
	return out
}

func ref(r gatewayapi.Ref) string {
	return fmt.Sprintf("%s %s/%s rule %d match %d", r.Kind, r.Namespace, r.Name, r.Rule, r.Match)
}

func httpMatch(m gatewayv1.HTTPRouteMatch) string {
	parts := []string{fmt.Sprintf("%s %s", *m.Path.Type, *m.Path.Value)}
	if m.Method != nil {
		parts = append(parts, "method "+string(*m.Method))
	}
	for _, h := range m.Headers {
		parts = append(parts, fmt.Sprintf("header %s=%s", h.Name, h.Value))
	}
	for _, q := range m.QueryParams {
		parts = append(parts, fmt.Sprintf("query %s=%s", q.Name, q.Value))
	}
	return strings.Join(parts, ", ")
}

func grpcMatch(m gatewayv1.GRPCRouteMatch) string {
	var parts []string
	if mm := m.Method; mm != nil {
		typ := gatewayv1.GRPCMethodMatchExact
		if mm.Type != nil {
			typ = *mm.Type
		}
		s, meth := "*", "*"
		if mm.Service != nil {
			s = *mm.Service
		}
		if mm.Method != nil {
			meth = *mm.Method
		}
		parts = append(parts, fmt.Sprintf("%s %s/%s", typ, s, meth))
	}
	for _, h := range m.Headers {
		parts = append(parts, fmt.Sprintf("header %s=%s", h.Name, h.Value))
	}
	if len(parts) == 0 {
		return "any"
	}
	return strings.Join(parts, ", ")
}

func backends(bs []*gatewayapi.Backend) string {
	if len(bs) == 0 {
		return "(no backends)"
	}
	var out []string
	for _, b := range bs {
		s := fmt.Sprintf("%s/%s:%d weight %d", b.Namespace, b.Name, b.Port, b.Weight)
		if !b.Valid() {
			s += " invalid " + string(b.Reason)
		} else {
			var members []string
			for _, m := range b.Members {
				members = append(members, m.Address)
			}
			s += " [" + strings.Join(members, " ") + "]"
		}
		for _, p := range b.Problems {
			s += " " + string(p.Reason)
		}
		if b.AppProtocol != "" {
			s += " " + b.AppProtocol
		}
		if b.TLS != nil {
			s += " tls " + b.TLS.Policy.String()
			if b.TLS.Invalid {
				s += " (invalid)"
			}
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

func mirrors(bs []*gatewayapi.Backend) string {
	if len(bs) == 0 {
		return ""
	}
	return ", mirror " + backends(bs)
}

// toYAML renders a value through its JSON form (so that the API types'
// field names apply) as block-style YAML, leaving out null fields such
// as the zero lastTransitionTime.
func toYAML(t *testing.T, v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		t.Fatal(err)
	}
	blockStyle(&n)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func blockStyle(n *yaml.Node) {
	n.Style = 0
	if n.Kind == yaml.MappingNode {
		var kept []*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i+1].Tag == "!!null" {
				continue
			}
			kept = append(kept, n.Content[i], n.Content[i+1])
		}
		n.Content = kept
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}
