package gatewayapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/sources/gatewayapi"
	"github.com/ramjet-dev/ramjet/sources/offline"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
	"github.com/ramjet-dev/ramjet/test/golden"
)

// TestGolden computes each testdata/<case>.txtar:
//
//	-- input.yaml --   the objects
//	-- options.yaml -- optional: features (supportedFeatures) and
//	                   unaddressed (Gateways "ns/name" without an address;
//	                   every other Gateway has 198.18.0.1)
//	-- status.yaml --  the statuses and each listener's tables (expected)
//
// go test -update rewrites status.yaml.
func TestGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			a := golden.ReadArchive(t, path)
			got := compute(t, a)
			if golden.Update() {
				a.Set("status.yaml", got)
				if err := os.WriteFile(path, a.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := a.Get("status.yaml"); got != want {
				t.Errorf("status.yaml differs (run with -update and review the diff):\n--- got\n%s\n--- want\n%s", got, want)
			}
		})
	}
}

type caseOptions struct {
	Features    []gatewayv1.FeatureName `yaml:"features"`
	Unaddressed []string                `yaml:"unaddressed"`
}

func compute(t *testing.T, a *golden.Archive) string {
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
	opts := gatewayapi.Options{SupportedFeatures: co.Features, Addresses: map[snapshot.Key][]gatewayv1.GatewayStatusAddress{}}
	ip := gatewayv1.IPAddressType
	for _, gw := range snap.Gateways {
		key := snapshot.Key{Namespace: gw.Namespace, Name: gw.Name}
		if !slices.Contains(co.Unaddressed, key.String()) {
			opts.Addresses[key] = []gatewayv1.GatewayStatusAddress{{Type: &ip, Value: "198.18.0.1"}}
		}
	}
	return render(t, gatewayapi.Compute(snap, opts))
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

func render(t *testing.T, res *gatewayapi.Result) string {
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
		docs = append(docs, doc{Kind: r.Kind, Name: r.Namespace + "/" + r.Name, Status: gatewayv1.RouteStatus{Parents: r.Parents}})
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
