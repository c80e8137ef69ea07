package gatewayapi

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// object names an object by API group, kind, namespace and name, as a
// ReferenceGrant does ("" is the core group).
type object struct {
	Group, Kind, Namespace, Name string
}

// grants are the ReferenceGrants by the namespace they live in: the
// namespace of the objects they let others refer to.
type grants map[string][]*gatewayv1.ReferenceGrant

func indexGrants(list []*gatewayv1.ReferenceGrant) grants {
	g := grants{}
	for _, rg := range list {
		g[rg.Namespace] = append(g[rg.Namespace], rg)
	}
	return g
}

// permits reports whether from may refer to to. A reference within one
// namespace needs no grant; across namespaces it needs a ReferenceGrant in
// to's namespace whose from names from's group, kind and namespace and
// whose to names to's group and kind, and its name or no name. It is the
// one check of every cross-namespace reference (listener certificates,
// route backends): a grant that is removed revokes the reference at the
// next computation.
func (g grants) permits(from, to object) bool {
	if from.Namespace == to.Namespace {
		return true
	}
	for _, rg := range g[to.Namespace] {
		if grantFrom(rg, from) && grantTo(rg, to) {
			return true
		}
	}
	return false
}

func grantFrom(rg *gatewayv1.ReferenceGrant, from object) bool {
	for _, f := range rg.Spec.From {
		if string(f.Group) == from.Group && string(f.Kind) == from.Kind && string(f.Namespace) == from.Namespace {
			return true
		}
	}
	return false
}

func grantTo(rg *gatewayv1.ReferenceGrant, to object) bool {
	for _, t := range rg.Spec.To {
		if string(t.Group) == to.Group && string(t.Kind) == to.Kind && (t.Name == nil || *t.Name == "" || string(*t.Name) == to.Name) {
			return true
		}
	}
	return false
}
