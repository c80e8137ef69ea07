package gatewayapi

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/certs"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// BackendTLS is how the data plane reaches a Service port over TLS, from
// a BackendTLSPolicy.
type BackendTLS struct {
	// Policy names the BackendTLSPolicy.
	Policy snapshot.Key
	// Hostname is the SNI and, without SubjectAltNames, the name the
	// member's certificate must carry.
	Hostname        string
	SubjectAltNames []gatewayv1.SubjectAltName
	// CACertificates is the PEM of the usable caCertificateRefs' ca.crt,
	// concatenated; System says to verify against the system's roots.
	CACertificates []byte
	System         bool
	// Invalid says the policy is not accepted for want of a usable CA or
	// an unsupported wellKnownCACertificates: connections to the port
	// must fail (the data plane answers 5xx).
	Invalid bool
}

// policyTarget is a Service and a port name ("" for every port).
type policyTarget struct {
	service snapshot.Key
	section string
}

// policyCheck is what the checks of one BackendTLSPolicy found.
type policyCheck struct {
	state          *PolicyState
	acceptReason   gatewayv1.PolicyConditionReason
	acceptMessage  string
	refsReason     gatewayv1.PolicyConditionReason
	refsMessage    string
	tls            *BackendTLS
	targets        []policyTarget
	conflictedWith []string
}

// policyIndex holds the BackendTLSPolicies and, per target, the one that
// applies: the oldest, then the first by namespace/name; the others are
// Conflicted.
type policyIndex struct {
	checks    []*policyCheck
	winners   map[policyTarget]*policyCheck
	byService map[snapshot.Key][]*policyCheck
}

func (c *computation) indexPolicies() {
	idx := &policyIndex{winners: map[policyTarget]*policyCheck{}, byService: map[snapshot.Key][]*policyCheck{}}
	candidates := map[policyTarget][]*policyCheck{}
	for _, p := range c.snap.BackendTLSPolicies {
		pc := c.policy(p)
		idx.checks = append(idx.checks, pc)
		for _, t := range pc.targets {
			candidates[t] = append(candidates[t], pc)
			if !slices.Contains(idx.byService[t.service], pc) {
				idx.byService[t.service] = append(idx.byService[t.service], pc)
			}
		}
	}
	for t, list := range candidates {
		slices.SortFunc(list, func(a, b *policyCheck) int { return compareAge(&a.state.Policy.ObjectMeta, &b.state.Policy.ObjectMeta) })
		idx.winners[t] = list[0]
		for _, loser := range list[1:] {
			loser.conflictedWith = append(loser.conflictedWith, fmt.Sprintf("%s (%s)", list[0].state.Policy.Name, targetName(t)))
		}
	}
	c.policies = idx
}

func targetName(t policyTarget) string {
	if t.section == "" {
		return "Service " + t.service.Name
	}
	return fmt.Sprintf("Service %s port %s", t.service.Name, t.section)
}

// compareAge orders objects oldest first, then by namespace/name.
func compareAge(a, b *metav1.ObjectMeta) int {
	return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
}

// forPort is the TLS of the policy that applies to a Service port: one
// that names the port's name wins over one for the whole Service.
func (idx *policyIndex) forPort(svc snapshot.Key, portName string) *BackendTLS {
	if portName != "" {
		if pc := idx.winners[policyTarget{svc, portName}]; pc != nil {
			return pc.tls
		}
	}
	if pc := idx.winners[policyTarget{svc, ""}]; pc != nil {
		return pc.tls
	}
	return nil
}

// policy checks one BackendTLSPolicy: its Service targets, and its
// validation: caCertificateRefs to ConfigMaps (InvalidKind otherwise) of
// its namespace with a ca.crt that parses (InvalidCACertificateRef
// otherwise; NoValidCACertificate when none is usable), or
// wellKnownCACertificates System (Invalid for another value).
func (c *computation) policy(p *gatewayv1.BackendTLSPolicy) *policyCheck {
	pc := &policyCheck{state: &PolicyState{Policy: p}}
	for _, t := range p.Spec.TargetRefs {
		if t.Group == "" && t.Kind == "Service" {
			section := ""
			if t.SectionName != nil {
				section = string(*t.SectionName)
			}
			pc.targets = append(pc.targets, policyTarget{snapshot.Key{Namespace: p.Namespace, Name: string(t.Name)}, section})
		}
	}
	v := &p.Spec.Validation
	tls := &BackendTLS{Policy: snapshot.Key{Namespace: p.Namespace, Name: p.Name}, Hostname: string(v.Hostname), SubjectAltNames: v.SubjectAltNames}
	pc.tls = tls
	switch {
	case v.WellKnownCACertificates != nil && *v.WellKnownCACertificates != "" && len(v.CACertificateRefs) > 0:
		pc.acceptReason, pc.acceptMessage = gatewayv1.PolicyReasonInvalid, "validation sets both caCertificateRefs and wellKnownCACertificates"
	case v.WellKnownCACertificates != nil && *v.WellKnownCACertificates != "":
		if *v.WellKnownCACertificates != gatewayv1.WellKnownCACertificatesSystem {
			pc.acceptReason, pc.acceptMessage = gatewayv1.PolicyReasonInvalid,
				fmt.Sprintf("wellKnownCACertificates %s is not supported (System is)", core.Quote(string(*v.WellKnownCACertificates)))
		}
		tls.System = true
	default:
		c.caRefs(p, pc)
	}
	tls.Invalid = pc.acceptReason != ""
	return pc
}

// caRefs loads the policy's caCertificateRefs; the ResolvedRefs reason is
// the first invalid ref's, the message names every invalid ref.
func (c *computation) caRefs(p *gatewayv1.BackendTLSPolicy, pc *policyCheck) {
	var problems []string
	for i, ref := range p.Spec.Validation.CACertificateRefs {
		reason, msg := c.caRef(p.Namespace, ref, pc.tls)
		if reason == "" {
			continue
		}
		if pc.refsReason == "" {
			pc.refsReason = reason
		}
		problems = append(problems, fmt.Sprintf("caCertificateRefs[%d]: %s", i, msg))
	}
	pc.refsMessage = strings.Join(problems, "; ")
	if len(pc.tls.CACertificates) == 0 {
		pc.acceptReason, pc.acceptMessage = gatewayv1.BackendTLSPolicyReasonNoValidCACertificate, "no caCertificateRef is usable"
	}
}

func (c *computation) caRef(namespace string, ref gatewayv1.LocalObjectReference, tls *BackendTLS) (gatewayv1.PolicyConditionReason, string) {
	if ref.Group != "" || ref.Kind != "ConfigMap" {
		return gatewayv1.BackendTLSPolicyReasonInvalidKind, fmt.Sprintf("%s is not a supported kind (ConfigMap is)", groupKind(string(ref.Group), string(ref.Kind)))
	}
	key := snapshot.Key{Namespace: namespace, Name: string(ref.Name)}
	cm := c.snap.ConfigMaps[key]
	if cm == nil {
		return gatewayv1.BackendTLSPolicyReasonInvalidCACertificateRef, fmt.Sprintf("ConfigMap %s not found", key)
	}
	pem, ok := cm.Data["ca.crt"]
	if !ok {
		return gatewayv1.BackendTLSPolicyReasonInvalidCACertificateRef, fmt.Sprintf("ConfigMap %s has no key ca.crt", key)
	}
	if _, err := certs.LoadCAPool([]byte(pem)); err != nil {
		return gatewayv1.BackendTLSPolicyReasonInvalidCACertificateRef, fmt.Sprintf("ConfigMap %s key ca.crt: %v", key, err)
	}
	if len(tls.CACertificates) > 0 && !strings.HasSuffix(string(tls.CACertificates), "\n") {
		tls.CACertificates = append(tls.CACertificates, '\n')
	}
	tls.CACertificates = append(tls.CACertificates, pem...)
	return "", ""
}

// policyStatuses fills in each policy's status: one ancestor entry per
// Gateway of ours with an accepted route whose backend is a Service port
// the policy targets, sorted by namespace/name.
func (c *computation) policyStatuses(routes []*RouteState) []*PolicyState {
	ancestors := map[*policyCheck]map[snapshot.Key]bool{}
	for _, r := range routes {
		gateways := acceptedGateways(r)
		for _, b := range r.backends() {
			for _, pc := range c.policies.byService[snapshot.Key{Namespace: b.Namespace, Name: b.Name}] {
				if !pc.targetsPort(b) {
					continue
				}
				if ancestors[pc] == nil {
					ancestors[pc] = map[snapshot.Key]bool{}
				}
				for _, g := range gateways {
					ancestors[pc][g] = true
				}
			}
		}
	}
	out := make([]*PolicyState, 0, len(c.policies.checks))
	for _, pc := range c.policies.checks {
		keys := make([]snapshot.Key, 0, len(ancestors[pc]))
		for k := range ancestors[pc] {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b snapshot.Key) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			pc.state.Status.Ancestors = append(pc.state.Status.Ancestors, c.ancestor(pc, k))
		}
		if len(pc.conflictedWith) == 0 {
			pc.state.TLS = pc.tls
		}
		out = append(out, pc.state)
	}
	return out
}

func (pc *policyCheck) targetsPort(b *Backend) bool {
	for _, t := range pc.targets {
		if t.service.Namespace == b.Namespace && t.service.Name == b.Name && (t.section == "" || t.section == b.portName) {
			return true
		}
	}
	return false
}

// ancestor is the status entry of a policy for one Gateway.
func (c *computation) ancestor(pc *policyCheck, gw snapshot.Key) gatewayv1.PolicyAncestorStatus {
	gen := pc.state.Policy.Generation
	accepted := condition(gatewayv1.PolicyConditionAccepted, true, gatewayv1.PolicyReasonAccepted, "", gen)
	switch {
	case len(pc.conflictedWith) > 0:
		accepted = condition(gatewayv1.PolicyConditionAccepted, false, gatewayv1.PolicyReasonConflicted,
			"an older BackendTLSPolicy applies: "+strings.Join(pc.conflictedWith, ", "), gen)
	case pc.acceptReason != "":
		accepted = condition(gatewayv1.PolicyConditionAccepted, false, pc.acceptReason, pc.acceptMessage, gen)
	}
	refs := condition(gatewayv1.BackendTLSPolicyConditionResolvedRefs, true, gatewayv1.BackendTLSPolicyReasonResolvedRefs, "", gen)
	if pc.refsReason != "" {
		refs = condition(gatewayv1.BackendTLSPolicyConditionResolvedRefs, false, pc.refsReason, pc.refsMessage, gen)
	}
	return gatewayv1.PolicyAncestorStatus{
		AncestorRef:    gatewayRef(gw),
		ControllerName: c.opts.controller(),
		Conditions:     []metav1.Condition{accepted, refs},
	}
}

func gatewayRef(gw snapshot.Key) gatewayv1.ParentReference {
	group, kind, ns := gatewayv1.Group(groupGateway), gatewayv1.Kind(kindGateway), gatewayv1.Namespace(gw.Namespace)
	return gatewayv1.ParentReference{Group: &group, Kind: &kind, Namespace: &ns, Name: gatewayv1.ObjectName(gw.Name)}
}
