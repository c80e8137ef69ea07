package offline

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/sources"
	"github.com/ramjet-dev/ramjet/sources/gatewayapi"
)

// ConditionReport is one condition of a Gateway API status that says an
// object is not served as written.
type ConditionReport struct {
	Kind      string `json:"kind" yaml:"kind"`
	Namespace string `json:"namespace,omitempty" yaml:"namespace,omitempty"`
	Name      string `json:"name" yaml:"name"`
	// Where is the part of the object's status the condition is in: ""
	// for the object itself, "listener NAME" for a Gateway's listener,
	// "parentRef NAMESPACE/NAME[ sectionName S][ port P]" for a route's
	// entry, "ancestor Gateway NAMESPACE/NAME" for a BackendTLSPolicy's.
	Where   string `json:"where,omitempty" yaml:"where,omitempty"`
	Type    string `json:"type" yaml:"type"`
	Status  string `json:"status" yaml:"status"`
	Reason  string `json:"reason" yaml:"reason"`
	Message string `json:"message,omitempty" yaml:"message,omitempty"`
}

// gatewayConditions are the conditions of the statuses the Gateway API
// input computed (none when it did not run) that say an object is not
// served as written (notAsWritten), ordered by kind (GatewayClass,
// Gateway, HTTPRoute, GRPCRoute, BackendTLSPolicy), then namespace and
// name, then as the status holds them. A route's entries carry what the
// merge with the other inputs left out of it (RouteState.ParentsWith).
func gatewayConditions(out *sources.Output) []ConditionReport {
	t := out.Inputs[gatewayapi.Name]
	if t == nil {
		return nil
	}
	res, _ := t.Detail.(*gatewayapi.Result)
	if res == nil {
		return nil
	}
	var c conditionList
	for _, cs := range res.Classes {
		c.add("GatewayClass", "", cs.Class.Name, "", cs.Status.Conditions)
	}
	for _, gs := range res.Gateways {
		gw := gs.Gateway
		c.add("Gateway", gw.Namespace, gw.Name, "", gs.Status.Conditions)
		for _, l := range gs.Status.Listeners {
			c.add("Gateway", gw.Namespace, gw.Name, "listener "+quoteUnusual(string(l.Name)), l.Conditions)
		}
	}
	findings := routeFindings(out.Findings)
	for _, rs := range res.Routes {
		for _, p := range rs.ParentsWith(findings[core.Origin{Kind: rs.Kind, Namespace: rs.Namespace, Name: rs.Name}]) {
			c.add(rs.Kind, rs.Namespace, rs.Name, parentWhere(rs.Namespace, p.ParentRef), p.Conditions)
		}
	}
	for _, ps := range res.Policies {
		p := ps.Policy
		for _, a := range ps.Status.Ancestors {
			c.add("BackendTLSPolicy", p.Namespace, p.Name, "ancestor Gateway "+refName(p.Namespace, a.AncestorRef), a.Conditions)
		}
	}
	slices.SortStableFunc(c, func(a, b ConditionReport) int {
		return cmp.Or(cmp.Compare(kindRank(a.Kind), kindRank(b.Kind)),
			cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return c
}

// conditionList collects the conditions that count.
type conditionList []ConditionReport

func (c *conditionList) add(kind, namespace, name, where string, conds []metav1.Condition) {
	for _, cond := range conds {
		if notAsWritten(cond) {
			*c = append(*c, ConditionReport{Kind: kind, Namespace: namespace, Name: name, Where: where,
				Type: cond.Type, Status: string(cond.Status), Reason: cond.Reason, Message: cond.Message})
		}
	}
}

// notAsWritten reports whether a condition says its object is not served
// as written: Accepted, ResolvedRefs or Programmed False, PartiallyInvalid
// True (rules dropped), or a type ending in Conflicted True (a listener's,
// gatewayapi.RouteConditionConflicted). A Programmed False for want of an
// address (AddressNotAssigned, and Pending on a listener) is not: offline
// no address is known, and it is the cluster's state, not the manifests'.
func notAsWritten(c metav1.Condition) bool {
	switch {
	case c.Status == metav1.ConditionTrue:
		return c.Type == string(gatewayv1.RouteConditionPartiallyInvalid) || strings.HasSuffix(c.Type, "Conflicted")
	case c.Status != metav1.ConditionFalse:
		return false
	case c.Type == string(gatewayv1.GatewayConditionProgrammed):
		return c.Reason != string(gatewayv1.GatewayReasonAddressNotAssigned) && c.Reason != string(gatewayv1.ListenerReasonPending)
	}
	return c.Type == string(gatewayv1.GatewayConditionAccepted) || c.Type == string(gatewayv1.GatewayConditionResolvedRefs)
}

// routeFindings are the findings about HTTPRoutes and GRPCRoutes, by
// route (kind, namespace and name).
func routeFindings(fs []core.Finding) map[core.Origin][]core.Finding {
	out := map[core.Origin][]core.Finding{}
	for _, f := range fs {
		if f.Object.Kind == "HTTPRoute" || f.Object.Kind == "GRPCRoute" {
			key := core.Origin{Kind: f.Object.Kind, Namespace: f.Object.Namespace, Name: f.Object.Name}
			out[key] = append(out[key], f)
		}
	}
	return out
}

// parentWhere names a route's parentRef.
func parentWhere(namespace string, ref gatewayv1.ParentReference) string {
	where := "parentRef " + refName(namespace, ref)
	if ref.SectionName != nil {
		where += " sectionName " + quoteUnusual(string(*ref.SectionName))
	}
	if ref.Port != nil {
		where += fmt.Sprintf(" port %d", *ref.Port)
	}
	return where
}

// refName is the namespace/name of a reference, in namespace unless it
// names another.
func refName(namespace string, ref gatewayv1.ParentReference) string {
	if ref.Namespace != nil && *ref.Namespace != "" {
		namespace = string(*ref.Namespace)
	}
	return quoteUnusual(namespace) + "/" + quoteUnusual(string(ref.Name))
}

// kindRank orders the kinds of the Gateway API conditions.
func kindRank(kind string) int {
	return slices.Index([]string{"GatewayClass", "Gateway", "HTTPRoute", "GRPCRoute", "BackendTLSPolicy"}, kind)
}
