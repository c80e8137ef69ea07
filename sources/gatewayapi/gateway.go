package gatewayapi

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/sources/ingress"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// Certificate is a usable certificate of an HTTPS listener.
type Certificate struct {
	Secret snapshot.Key
	*core.Certificate
}

// listenerCheck is what the checks of one listener found.
type listenerCheck struct {
	// acceptReason is why the listener is not accepted ("" when it is).
	acceptReason  gatewayv1.ListenerConditionReason
	acceptMessage string
	// refsReason is why its references do not resolve ("" when they do).
	refsReason  gatewayv1.ListenerConditionReason
	refsMessage string
	// conflict is why it is conflicted ("" when it is not).
	conflict        gatewayv1.ListenerConditionReason
	conflictMessage string
	kinds           []gatewayv1.RouteGroupKind
	certs           []Certificate
}

func (lc *listenerCheck) accepted() bool { return lc.acceptReason == "" && lc.conflict == "" }

func (lc *listenerCheck) allows(kind string) bool {
	for _, k := range lc.kinds {
		if string(k.Kind) == kind {
			return true
		}
	}
	return false
}

// routeKinds are the route kinds a listener of a supported protocol takes.
var routeKinds = []string{kindHTTPRoute, kindGRPCRoute}

const (
	kindHTTPRoute = "HTTPRoute"
	kindGRPCRoute = "GRPCRoute"
	kindGateway   = "Gateway"
	groupGateway  = gatewayv1.GroupName
)

// gateway decides a Gateway of one of our classes and its listeners'
// checks; route attachment fills in the rest of the listeners' status.
func (c *computation) gateway(gw *gatewayv1.Gateway, class *ClassState) (*GatewayState, []*listenerCheck) {
	st := &GatewayState{Gateway: gw}
	checks := make([]*listenerCheck, len(gw.Spec.Listeners))
	for i := range gw.Spec.Listeners {
		checks[i] = c.listener(gw, &gw.Spec.Listeners[i])
	}
	conflicts(gw.Spec.Listeners, checks)
	accepted := c.gatewayAccepted(gw, class, checks)
	st.Accepted = accepted.Status == metav1.ConditionTrue
	programmedAny := false
	for i := range gw.Spec.Listeners {
		ls := &ListenerState{Listener: &gw.Spec.Listeners[i], Certificates: checks[i].certs}
		ls.Programmed = st.Accepted && checks[i].accepted() && (gw.Spec.Listeners[i].Protocol == gatewayv1.HTTPProtocolType || len(ls.Certificates) > 0)
		programmedAny = programmedAny || ls.Programmed
		st.Listeners = append(st.Listeners, ls)
	}
	addresses := c.opts.Addresses[snapshot.Key{Namespace: gw.Namespace, Name: gw.Name}]
	st.Status = gatewayv1.GatewayStatus{
		Addresses:  addresses,
		Conditions: []metav1.Condition{accepted, gatewayProgrammed(gw, st.Accepted, programmedAny, addresses)},
	}
	return st, checks
}

// gatewayAccepted is the Gateway's Accepted condition: not when its class
// is not accepted (Invalid) or it has an infrastructure parametersRef
// (InvalidParameters, this controller takes none), nor when no listener
// is accepted (ListenersNotValid); accepted with ListenersNotValid when
// only some are.
func (c *computation) gatewayAccepted(gw *gatewayv1.Gateway, class *ClassState, checks []*listenerCheck) metav1.Condition {
	gen := gw.Generation
	if !class.Accepted {
		return condition(gatewayv1.GatewayConditionAccepted, false, gatewayv1.GatewayReasonInvalid,
			fmt.Sprintf("GatewayClass %s is not accepted", class.Class.Name), gen)
	}
	if infra := gw.Spec.Infrastructure; infra != nil && infra.ParametersRef != nil {
		p := infra.ParametersRef
		return condition(gatewayv1.GatewayConditionAccepted, false, gatewayv1.GatewayReasonInvalidParameters,
			fmt.Sprintf("infrastructure.parametersRef %s %s: this controller takes no parameters", groupKind(string(p.Group), string(p.Kind)), p.Name), gen)
	}
	for _, a := range gw.Spec.Addresses {
		if t := addressType(a.Type); t != gatewayv1.IPAddressType && t != gatewayv1.HostnameAddressType {
			return condition(gatewayv1.GatewayConditionAccepted, false, gatewayv1.GatewayReasonUnsupportedAddress,
				fmt.Sprintf("spec.addresses: type %s is not supported (IPAddress and Hostname are)", core.Quote(string(t))), gen)
		}
	}
	var good, bad []string
	for i, lc := range checks {
		name := string(gw.Spec.Listeners[i].Name)
		if lc.accepted() {
			good = append(good, name)
		} else {
			bad = append(bad, name)
		}
	}
	switch {
	case len(good) == 0:
		return condition(gatewayv1.GatewayConditionAccepted, false, gatewayv1.GatewayReasonListenersNotValid,
			"no listener is valid: "+strings.Join(bad, ", "), gen)
	case len(bad) > 0:
		return condition(gatewayv1.GatewayConditionAccepted, true, gatewayv1.GatewayReasonListenersNotValid,
			fmt.Sprintf("listeners not valid: %s; accepted: %s", strings.Join(bad, ", "), strings.Join(good, ", ")), gen)
	}
	return condition(gatewayv1.GatewayConditionAccepted, true, gatewayv1.GatewayReasonAccepted, "", gen)
}

// gatewayProgrammed is the Gateway's Programmed condition: it needs to be
// accepted, to have a listener to serve and an address, and every address
// its spec asks for (AddressNotUsable otherwise, also when a value is
// asked for and the Gateway has no address at all; a request without a
// value is met by any address of its type).
func gatewayProgrammed(gw *gatewayv1.Gateway, accepted, listeners bool, addresses []gatewayv1.GatewayStatusAddress) metav1.Condition {
	gen := gw.Generation
	switch {
	case !accepted:
		return condition(gatewayv1.GatewayConditionProgrammed, false, gatewayv1.GatewayReasonInvalid, "the Gateway is not accepted", gen)
	case !listeners:
		return condition(gatewayv1.GatewayConditionProgrammed, false, gatewayv1.GatewayReasonInvalid, "no listener can be served", gen)
	case len(addresses) == 0:
		if want, ok := requestedValue(gw); ok {
			return condition(gatewayv1.GatewayConditionProgrammed, false, gatewayv1.GatewayReasonAddressNotUsable,
				fmt.Sprintf("spec.addresses: the %s %s is not usable: the load balancer has not assigned it", addressType(want.Type), core.Quote(want.Value)), gen)
		}
		return condition(gatewayv1.GatewayConditionProgrammed, false, gatewayv1.GatewayReasonAddressNotAssigned, "no address is assigned to the Gateway yet", gen)
	}
	for _, want := range gw.Spec.Addresses {
		if !assigned(want, addresses) {
			return condition(gatewayv1.GatewayConditionProgrammed, false, gatewayv1.GatewayReasonAddressNotUsable,
				fmt.Sprintf("spec.addresses: the %s %s is not one of the Gateway's addresses", addressType(want.Type), core.Quote(want.Value)), gen)
		}
	}
	return condition(gatewayv1.GatewayConditionProgrammed, true, gatewayv1.GatewayReasonProgrammed, "", gen)
}

// requestedValue is the first address of the Gateway's spec that names a
// value. A Gateway that asks for one and has no address at all is taken
// to have asked for what it cannot get: a load balancer that cannot give a
// requested address often leaves the Service pending.
func requestedValue(gw *gatewayv1.Gateway) (gatewayv1.GatewaySpecAddress, bool) {
	for _, a := range gw.Spec.Addresses {
		if a.Value != "" {
			return a, true
		}
	}
	return gatewayv1.GatewaySpecAddress{}, false
}

// assigned reports whether a requested address is among the Gateway's.
func assigned(want gatewayv1.GatewaySpecAddress, addresses []gatewayv1.GatewayStatusAddress) bool {
	for _, a := range addresses {
		if addressType(a.Type) == addressType(want.Type) && (want.Value == "" || strings.EqualFold(a.Value, want.Value)) {
			return true
		}
	}
	return false
}

// addressType is an address's type; unset is IPAddress.
func addressType(t *gatewayv1.AddressType) gatewayv1.AddressType {
	if t == nil {
		return gatewayv1.IPAddressType
	}
	return *t
}

// listener checks one listener alone: its protocol, its allowed route
// kinds and its certificates.
func (c *computation) listener(gw *gatewayv1.Gateway, l *gatewayv1.Listener) *listenerCheck {
	lc := &listenerCheck{kinds: []gatewayv1.RouteGroupKind{}}
	switch l.Protocol {
	case gatewayv1.HTTPProtocolType:
	case gatewayv1.HTTPSProtocolType:
		if l.TLS != nil && l.TLS.Mode != nil && *l.TLS.Mode != gatewayv1.TLSModeTerminate {
			lc.acceptReason, lc.acceptMessage = gatewayv1.ListenerReasonUnsupportedValue, fmt.Sprintf("tls.mode %s: an HTTPS listener terminates TLS", *l.TLS.Mode)
			return lc
		}
	default:
		lc.acceptReason, lc.acceptMessage = gatewayv1.ListenerReasonUnsupportedProtocol, fmt.Sprintf("protocol %s is not supported (HTTP and HTTPS are)", core.Quote(string(l.Protocol)))
		return lc
	}
	lc.routeKinds(l)
	if l.Protocol == gatewayv1.HTTPSProtocolType {
		c.certificates(gw, l, lc)
	}
	return lc
}

// routeKinds fills in the kinds of allowedRoutes this controller serves
// (all of them when none is named); a kind it does not serve makes the
// listener's refs unresolved (InvalidRouteKinds).
func (lc *listenerCheck) routeKinds(l *gatewayv1.Listener) {
	var asked []gatewayv1.RouteGroupKind
	if l.AllowedRoutes != nil {
		asked = l.AllowedRoutes.Kinds
	}
	if len(asked) == 0 {
		for _, k := range routeKinds {
			lc.kinds = append(lc.kinds, routeGroupKind(k))
		}
		return
	}
	var invalid []string
	for _, k := range asked {
		group := groupGateway
		if k.Group != nil {
			group = string(*k.Group)
		}
		if group == groupGateway && slices.Contains(routeKinds, string(k.Kind)) {
			if !lc.allows(string(k.Kind)) {
				lc.kinds = append(lc.kinds, routeGroupKind(string(k.Kind)))
			}
			continue
		}
		invalid = append(invalid, groupKind(group, string(k.Kind)))
	}
	if len(invalid) > 0 {
		lc.refsReason = gatewayv1.ListenerReasonInvalidRouteKinds
		lc.refsMessage = fmt.Sprintf("route kinds not supported: %s (HTTPRoute and GRPCRoute are)", strings.Join(invalid, ", "))
	}
}

func routeGroupKind(kind string) gatewayv1.RouteGroupKind {
	g := gatewayv1.Group(groupGateway)
	return gatewayv1.RouteGroupKind{Group: &g, Kind: gatewayv1.Kind(kind)}
}

// certificates loads the listener's certificateRefs: each must name a
// Secret of type kubernetes.io/tls that the certificate loader takes, in
// the Gateway's namespace or in one whose ReferenceGrant lets the Gateway
// refer to it (RefNotPermitted otherwise). The usable ones serve; any
// other makes the refs unresolved (InvalidCertificateRef), the first
// problem naming the reason.
func (c *computation) certificates(gw *gatewayv1.Gateway, l *gatewayv1.Listener, lc *listenerCheck) {
	var refs []gatewayv1.SecretObjectReference
	if l.TLS != nil {
		refs = l.TLS.CertificateRefs
	}
	if len(refs) == 0 && lc.refsReason == "" {
		lc.refsReason, lc.refsMessage = gatewayv1.ListenerReasonInvalidCertificateRef, "an HTTPS listener needs tls.certificateRefs"
	}
	for i, ref := range refs {
		reason, msg := c.certificate(gw, ref, lc)
		if reason != "" && lc.refsReason == "" {
			lc.refsReason, lc.refsMessage = reason, fmt.Sprintf("tls.certificateRefs[%d]: %s", i, msg)
		}
	}
}

func (c *computation) certificate(gw *gatewayv1.Gateway, ref gatewayv1.SecretObjectReference, lc *listenerCheck) (gatewayv1.ListenerConditionReason, string) {
	key, reason, message := certificateSecret(gw, ref, c.grants)
	if reason != "" {
		return reason, message
	}
	cert, problem := ingress.LoadTLSSecret(c.snap, key)
	if cert == nil {
		return gatewayv1.ListenerReasonInvalidCertificateRef, fmt.Sprintf("Secret %s: %s", key, problem)
	}
	lc.certs = append(lc.certs, Certificate{Secret: key, Certificate: cert})
	return "", ""
}

// certificateSecret is the Secret a certificateRef names, or why it may
// not be used: a kind that is not Secret, or another namespace without a
// ReferenceGrant that permits the reference.
func certificateSecret(gw *gatewayv1.Gateway, ref gatewayv1.SecretObjectReference, g grants) (snapshot.Key, gatewayv1.ListenerConditionReason, string) {
	group, kind := "", "Secret"
	if ref.Group != nil {
		group = string(*ref.Group)
	}
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	if group != "" || kind != "Secret" {
		return snapshot.Key{}, gatewayv1.ListenerReasonInvalidCertificateRef, fmt.Sprintf("%s is not a supported kind (Secret is)", groupKind(group, kind))
	}
	key := snapshot.Key{Namespace: gw.Namespace, Name: string(ref.Name)}
	if ref.Namespace != nil && *ref.Namespace != "" {
		key.Namespace = string(*ref.Namespace)
	}
	from := object{Group: groupGateway, Kind: kindGateway, Namespace: gw.Namespace}
	if !g.permits(from, object{Kind: "Secret", Namespace: key.Namespace, Name: key.Name}) {
		return snapshot.Key{}, gatewayv1.ListenerReasonRefNotPermitted, fmt.Sprintf("Secret %s is in another namespace and no ReferenceGrant there permits the reference", key)
	}
	return key, "", ""
}

// conflicts marks the listeners that are not distinct: on one port,
// listeners of different protocols are all ProtocolConflict; listeners of
// one protocol with the same hostname are all HostnameConflict. No
// listener wins a conflict. Listeners of protocols that are not served
// take no part.
func conflicts(listeners []gatewayv1.Listener, checks []*listenerCheck) {
	byPort := map[gatewayv1.PortNumber][]int{}
	for i, l := range listeners {
		if checks[i].acceptReason != gatewayv1.ListenerReasonUnsupportedProtocol {
			byPort[l.Port] = append(byPort[l.Port], i)
		}
	}
	for port, group := range byPort {
		protocols := map[gatewayv1.ProtocolType]bool{}
		for _, i := range group {
			protocols[listeners[i].Protocol] = true
		}
		if len(protocols) > 1 {
			for _, i := range group {
				checks[i].conflict = gatewayv1.ListenerReasonProtocolConflict
				checks[i].conflictMessage = fmt.Sprintf("port %d is used by listeners of different protocols", port)
			}
			continue
		}
		byHost := map[string][]int{}
		for _, i := range group {
			byHost[strings.ToLower(hostname(listeners[i].Hostname))] = append(byHost[strings.ToLower(hostname(listeners[i].Hostname))], i)
		}
		for host, same := range byHost {
			if len(same) < 2 {
				continue
			}
			for _, i := range same {
				checks[i].conflict = gatewayv1.ListenerReasonHostnameConflict
				checks[i].conflictMessage = fmt.Sprintf("port %d: %d listeners have the hostname %s", port, len(same), core.Quote(orAny(host)))
			}
		}
	}
}

func hostname(h *gatewayv1.Hostname) string {
	if h == nil {
		return ""
	}
	return string(*h)
}

func orAny(h string) string {
	if h == "" {
		return "(any)"
	}
	return h
}

// listenerStatus is a listener's status once its routes are attached.
func listenerStatus(gw *gatewayv1.Gateway, ls *ListenerState, lc *listenerCheck, attached int32) gatewayv1.ListenerStatus {
	gen := gw.Generation
	accepted := condition(gatewayv1.ListenerConditionAccepted, true, gatewayv1.ListenerReasonAccepted, "", gen)
	switch {
	case lc.acceptReason != "":
		accepted = condition(gatewayv1.ListenerConditionAccepted, false, lc.acceptReason, lc.acceptMessage, gen)
	case lc.conflict != "":
		accepted = condition(gatewayv1.ListenerConditionAccepted, false, lc.conflict, lc.conflictMessage, gen)
	}
	refs := condition(gatewayv1.ListenerConditionResolvedRefs, true, gatewayv1.ListenerReasonResolvedRefs, "", gen)
	if lc.refsReason != "" {
		refs = condition(gatewayv1.ListenerConditionResolvedRefs, false, lc.refsReason, lc.refsMessage, gen)
	}
	programmed := condition(gatewayv1.ListenerConditionProgrammed, true, gatewayv1.ListenerReasonProgrammed, "", gen)
	if !ls.Programmed {
		programmed = condition(gatewayv1.ListenerConditionProgrammed, false, gatewayv1.ListenerReasonInvalid, notProgrammed(gw, ls, lc), gen)
	}
	conflicted := condition(gatewayv1.ListenerConditionConflicted, false, gatewayv1.ListenerReasonNoConflicts, "", gen)
	if lc.conflict != "" {
		conflicted = condition(gatewayv1.ListenerConditionConflicted, true, lc.conflict, lc.conflictMessage, gen)
	}
	return gatewayv1.ListenerStatus{
		Name:           ls.Listener.Name,
		SupportedKinds: lc.kinds,
		AttachedRoutes: attached,
		Conditions:     []metav1.Condition{accepted, refs, programmed, conflicted},
	}
}

func notProgrammed(gw *gatewayv1.Gateway, ls *ListenerState, lc *listenerCheck) string {
	switch {
	case lc.acceptReason != "" || lc.conflict != "":
		return "the listener is not accepted"
	case len(ls.Certificates) == 0 && ls.Listener.Protocol == gatewayv1.HTTPSProtocolType:
		return "the listener has no usable certificate"
	}
	return fmt.Sprintf("Gateway %s/%s is not accepted", gw.Namespace, gw.Name)
}
