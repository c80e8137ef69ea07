package gatewayapi

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/certs"
	"github.com/ramjet-dev/ramjet/registry"
	"github.com/ramjet-dev/ramjet/sources/input"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// Name is the input's name, as --gateway-api enables it.
const Name = "gateway-api"

func init() {
	registry.RegisterInput(&registry.Input{Name: Name,
		Doc: "gateway.networking.k8s.io/v1 GatewayClasses, Gateways, HTTPRoutes, GRPCRoutes, ReferenceGrants and BackendTLSPolicies."})
}

// Input is the Gateway API input with its options, as the controller runs
// it: Compute's statuses, and the contributions that serve each
// programmed listener's route tables.
type Input struct {
	// Options are Compute's; their Addresses are filled from Addressing.
	Options Options
	// Addressing says where each Gateway's listeners are served.
	Addressing Addressing
}

var _ input.Input = (*Input)(nil)

// Addressing is where Gateways are served: each at an address of its own
// (a Service per Gateway whose target ports are listeners the input adds),
// or on listeners of the base that every Gateway shares.
type Addressing interface {
	// Assign says, for the snapshot, where every Gateway is served.
	Assign(snap *snapshot.Snapshot) map[snapshot.Key]Assignment
}

// Assignment is where one Gateway is served.
type Assignment struct {
	// Addresses are the Gateway's addresses, for its status.
	Addresses []gatewayv1.GatewayStatusAddress
	// Ports maps each listener port of the Gateway to the data-plane
	// listener that serves it. A port without one is not served.
	Ports map[gatewayv1.PortNumber]PortAssignment
}

// PortAssignment is the data-plane listener of one Gateway port.
type PortAssignment struct {
	// Listener names it. With Address set the input adds it; without,
	// it is a listener of the base (shared).
	Listener string
	Address  string
}

// OwnListener is the generated name of the data-plane listener that serves
// port of a Gateway of its own: "gw-", 12 hex digits of the Gateway's key
// and the port.
func OwnListener(gateway snapshot.Key, port gatewayv1.PortNumber) string {
	sum := sha256.Sum256([]byte(gateway.String()))
	return "gw-" + hex.EncodeToString(sum[:6]) + "-" + strconv.Itoa(int(port))
}

// listenerGroup is the SNI group of a Gateway listener's hosts (see
// core.ScopedHost.Group): a digest of the Gateway and the listener's name,
// so that no user text goes into the configuration.
func listenerGroup(gw *gatewayv1.Gateway, ls *ListenerState) string {
	sum := sha256.Sum256([]byte(gatewayKey(gw).String() + "/" + string(ls.Listener.Name)))
	return "l-" + hex.EncodeToString(sum[:6])
}

// Name is the input's name.
func (*Input) Name() string { return Name }

// Kinds are the Gateway API kinds and Namespaces (for allowedRoutes
// selectors).
func (*Input) Kinds() []snapshot.Kind {
	return []snapshot.Kind{snapshot.GatewayClasses, snapshot.Gateways, snapshot.HTTPRoutes, snapshot.GRPCRoutes,
		snapshot.ReferenceGrants, snapshot.BackendTLSPolicies, snapshot.Namespaces}
}

// References are the Secrets of our Gateways' certificateRefs that are
// in the Gateway's namespace or that a ReferenceGrant lets it read, and
// the ConfigMaps of the BackendTLSPolicies' caCertificateRefs.
func (in *Input) References(snap *snapshot.Snapshot) snapshot.Refs {
	var refs snapshot.Refs
	classes := classes(snap.GatewayClasses, in.Options)
	g := indexGrants(snap.ReferenceGrants)
	for _, gw := range snap.Gateways {
		if classes[string(gw.Spec.GatewayClassName)] == nil {
			continue
		}
		for _, l := range gw.Spec.Listeners {
			if l.TLS == nil {
				continue
			}
			for _, ref := range l.TLS.CertificateRefs {
				if key, reason, _ := certificateSecret(gw, ref, g); reason == "" {
					refs.Secrets = append(refs.Secrets, key)
				}
			}
		}
	}
	for _, p := range snap.BackendTLSPolicies {
		for _, ref := range p.Spec.Validation.CACertificateRefs {
			if ref.Kind == "ConfigMap" && (ref.Group == "" || ref.Group == "core") {
				refs.ConfigMaps = append(refs.ConfigMaps, snapshot.Key{Namespace: p.Namespace, Name: string(ref.Name)})
			}
		}
	}
	return refs
}

// Translate computes the statuses and the contributions: one per Gateway
// that adds data-plane listeners, one per route that has entries on a
// programmed listener.
func (in *Input) Translate(snap *snapshot.Snapshot) *input.Translation {
	assigned := in.Addressing.Assign(snap)
	opts := in.Options
	opts.Addresses = make(map[snapshot.Key][]gatewayv1.GatewayStatusAddress, len(assigned))
	for key, a := range assigned {
		if len(a.Addresses) > 0 {
			opts.Addresses[key] = a.Addresses
		}
	}
	res := Compute(snap, opts)
	b := &builder{routes: map[string]*core.Contribution{}, tables: map[tableKey]string{}, vias: map[string]map[core.Scope][]listenerOf{}}
	gateways := slices.Clone(res.Gateways)
	slices.SortStableFunc(gateways, func(a, b *GatewayState) int { return compareAge(&a.Gateway.ObjectMeta, &b.Gateway.ObjectMeta) })
	for _, gs := range gateways {
		if gs.Accepted {
			b.gateway(gs, assigned[gatewayKey(gs.Gateway)])
		}
	}
	out := &input.Translation{Contributions: b.gateways, Detail: res}
	for _, rs := range res.Routes {
		id := routeID(rs.Kind, rs.Namespace, rs.Name)
		if c := b.routes[id]; c != nil {
			out.Contributions = append(out.Contributions, c)
		}
		rs.scopes = scopeParents(rs, b.vias[id])
	}
	return out
}

// builder collects the contributions of one translation.
type builder struct {
	gateways []*core.Contribution
	routes   map[string]*core.Contribution // by routeID
	// tables records which Gateway took each listener and hostname:
	// Gateways sharing a listener cannot serve one hostname twice.
	tables map[tableKey]string
	// vias are, by routeID, the Gateway listeners that put the route's
	// entries into each scoped host.
	vias map[string]map[core.Scope][]listenerOf
}

type tableKey struct{ listener, hostname string }

func routeID(kind, namespace, name string) string { return kind + " " + namespace + "/" + name }

// gateway adds what one accepted Gateway serves: its own listeners, and
// the tables of its programmed listeners, those with a hostname first (a
// request goes to the most specific listener of its port).
func (b *builder) gateway(gs *GatewayState, a Assignment) {
	gw := gs.Gateway
	contribution := &core.Contribution{Origin: origin("Gateway", &gw.ObjectMeta)}
	listeners := slices.Clone(gs.Listeners)
	slices.SortStableFunc(listeners, func(x, y *ListenerState) int {
		return compareHostnames(hostname(x.Listener.Hostname), hostname(y.Listener.Hostname))
	})
	added := map[string]bool{}
	for _, ls := range listeners {
		port, ok := a.Ports[ls.Listener.Port]
		if !ls.Programmed || !ok {
			continue
		}
		if port.Address != "" && !added[port.Listener] {
			added[port.Listener] = true
			contribution.Listeners = append(contribution.Listeners, ownListener(gs, ls.Listener.Port, port))
		}
		if port.Address != "" && ls.Listener.Protocol == gatewayv1.HTTPSProtocolType && ls.Listener.Hostname == nil {
			// The names no route holds belong to this listener's group
			// too: a request for one on a connection set up for another
			// listener's name is misdirected (421), not a 404.
			contribution.Scoped = append(contribution.Scoped, core.ScopedHost{Listener: port.Listener, Group: listenerGroup(gw, ls)})
		}
		for _, h := range ls.Hosts {
			b.table(gw, ls, port.Listener, h)
		}
	}
	if len(contribution.Listeners) > 0 {
		b.gateways = append(b.gateways, contribution)
	}
}

// ownListener is the data-plane listener of a Gateway port: HTTPS when its
// listeners are, with the default certificate of its listener without a
// hostname (else of its first HTTPS listener); otherwise plain HTTP that
// also takes h2c with prior knowledge, for GRPCRoutes over cleartext (as
// Envoy's automatic codec does).
func ownListener(gs *GatewayState, port gatewayv1.PortNumber, pa PortAssignment) core.Listener {
	l := core.Listener{Name: pa.Listener, Address: pa.Address, H2C: true}
	for _, ls := range gs.Listeners {
		if ls.Listener.Port != port || ls.Listener.Protocol != gatewayv1.HTTPSProtocolType || !ls.Programmed {
			continue
		}
		l.TLS = true
		if len(ls.Certificates) > 0 && (l.Cert == nil || ls.Listener.Hostname == nil) {
			l.Cert = ls.Certificates[0].Certificate
		}
	}
	return l
}

// table adds the entries of one hostname of a listener to their routes'
// contributions, gRPC entries first (they match only gRPC requests), each
// group in precedence order.
func (b *builder) table(gw *gatewayv1.Gateway, ls *ListenerState, listener string, h *Host) {
	k := tableKey{listener, h.Hostname}
	scope := core.Scope{Listener: listener, Host: h.Hostname}
	for _, e := range h.GRPC {
		b.via(e.Ref, scope, gw, ls)
	}
	for _, e := range h.HTTP {
		b.via(e.Ref, scope, gw, ls)
	}
	if holder, taken := b.tables[k]; taken {
		if holder != gatewayKey(gw).String() {
			b.sharedConflict(gw, listener, h, holder)
		}
		return
	}
	b.tables[k] = gatewayKey(gw).String()
	cert := hostCertificate(ls, h.Hostname)
	group := listenerGroup(gw, ls)
	order := 0
	for i := range h.GRPC {
		e := &h.GRPC[i]
		sh := b.scoped(e.Ref, listener, h.Hostname, cert, group)
		sh.Routes = append(sh.Routes, grpcRoute(order, e))
		order++
	}
	for i := range h.HTTP {
		e := &h.HTTP[i]
		sh := b.scoped(e.Ref, listener, h.Hostname, cert, group)
		sh.Routes = append(sh.Routes, httpRoute(order, e, ls.Listener.Port))
		order++
	}
}

// hostCertificate is the certificate of a hostname on an HTTPS listener:
// the first of the listener's that covers it, else, on a listener with a
// hostname, its first; nil serves the data-plane listener's default.
func hostCertificate(ls *ListenerState, hostname string) *core.Certificate {
	if ls.Listener.Protocol != gatewayv1.HTTPSProtocolType || len(ls.Certificates) == 0 || hostname == "" {
		return nil
	}
	for _, c := range ls.Certificates {
		if certs.Covers(c.Parsed, hostname) == nil {
			return c.Certificate
		}
	}
	if ls.Listener.Hostname != nil {
		return ls.Certificates[0].Certificate
	}
	return nil
}

// sharedConflict reports the entries of a hostname another Gateway already
// serves on a shared listener.
func (b *builder) sharedConflict(gw *gatewayv1.Gateway, listener string, h *Host, holder string) {
	seen := map[string]bool{}
	note := func(ref Ref) {
		c := b.route(ref)
		if id := routeID(ref.Kind, ref.Namespace, ref.Name); !seen[id] {
			seen[id] = true
			c.Findings = append(c.Findings, core.Finding{Object: c.Origin, Reason: core.PathConflict,
				Scope: core.Scope{Listener: listener, Host: h.Hostname}, Message: fmt.Sprintf(
					"hostname %s of listener %s is already served by Gateway %s, which shares the listener and is older; the entries of Gateway %s for it are not served",
					core.Quote(orAny(h.Hostname)), core.Quote(listener), holder, gatewayKey(gw))})
		}
	}
	for _, e := range h.GRPC {
		note(e.Ref)
	}
	for _, e := range h.HTTP {
		note(e.Ref)
	}
}

// route is the contribution of the route an entry comes from.
func (b *builder) route(ref Ref) *core.Contribution {
	id := routeID(ref.Kind, ref.Namespace, ref.Name)
	c := b.routes[id]
	if c == nil {
		c = &core.Contribution{Origin: core.Origin{Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name, UID: ref.uid, Created: ref.created}}
		b.routes[id] = c
	}
	return c
}

// scoped is the route's scoped host for a listener and hostname.
func (b *builder) scoped(ref Ref, listener, hostname string, cert *core.Certificate, group string) *core.ScopedHost {
	c := b.route(ref)
	for i := range c.Scoped {
		if sh := &c.Scoped[i]; sh.Listener == listener && sh.Host == hostname {
			return sh
		}
	}
	c.Scoped = append(c.Scoped, core.ScopedHost{Listener: listener, Host: hostname, Cert: cert, Group: group})
	return &c.Scoped[len(c.Scoped)-1]
}
