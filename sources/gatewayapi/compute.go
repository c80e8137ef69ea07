package gatewayapi

import (
	"cmp"
	"slices"

	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// computation is one run of Compute.
type computation struct {
	snap     *snapshot.Snapshot
	opts     Options
	grants   grants
	policies *policyIndex
	gateways map[snapshot.Key]*gatewayEntry
}

// gatewayEntry is a Gateway of ours while routes attach to it.
type gatewayEntry struct {
	state  *GatewayState
	checks []*listenerCheck
	// attached are, per listener, the routes ("Kind ns/name") attached.
	attached []map[string]bool
	// hosts are, per listener, its route tables by served hostname;
	// added the routes already in each ("Kind ns/name hostname").
	hosts []map[string]*Host
	added []map[string]bool
}

// host is a listener's table for a served hostname, and whether route
// is new to it.
func (ge *gatewayEntry) host(listener int, hostname, route string) (*Host, bool) {
	h := ge.hosts[listener][hostname]
	if h == nil {
		h = &Host{Hostname: hostname}
		ge.hosts[listener][hostname] = h
	}
	key := route + " " + hostname
	if ge.added[listener][key] {
		return h, false
	}
	ge.added[listener][key] = true
	return h, true
}

// Compute decides the Gateway API input of a snapshot: the statuses of
// our GatewayClasses, of their Gateways, of the HTTPRoutes and GRPCRoutes
// with a parentRef to one of those Gateways and of the BackendTLSPolicies,
// and each listener's route tables in precedence order. The work is in
// proportion to the Gateway API objects and the Services, EndpointSlices,
// Secrets and ConfigMaps they name; routes are looked at through the
// Gateways their parentRefs name.
func Compute(snap *snapshot.Snapshot, opts Options) *Result {
	c := &computation{snap: snap, opts: opts, grants: indexGrants(snap.ReferenceGrants), gateways: map[snapshot.Key]*gatewayEntry{}}
	classes := classes(snap.GatewayClasses, opts)
	res := &Result{}
	for _, gc := range classes {
		res.Classes = append(res.Classes, gc)
	}
	slices.SortFunc(res.Classes, func(a, b *ClassState) int { return cmp.Compare(a.Class.Name, b.Class.Name) })
	for _, gw := range snap.Gateways {
		class := classes[string(gw.Spec.GatewayClassName)]
		if class == nil {
			continue
		}
		st, checks := c.gateway(gw, class)
		ge := &gatewayEntry{state: st, checks: checks}
		for range checks {
			ge.attached = append(ge.attached, map[string]bool{})
			ge.hosts = append(ge.hosts, map[string]*Host{})
			ge.added = append(ge.added, map[string]bool{})
		}
		c.gateways[snapshot.Key{Namespace: gw.Namespace, Name: gw.Name}] = ge
		res.Gateways = append(res.Gateways, st)
	}
	c.indexPolicies()
	for _, r := range snap.HTTPRoutes {
		if c.ours(r.Namespace, r.Spec.ParentRefs) {
			res.Routes = append(res.Routes, c.httpRoute(r))
		}
	}
	for _, r := range snap.GRPCRoutes {
		if c.ours(r.Namespace, r.Spec.ParentRefs) {
			res.Routes = append(res.Routes, c.grpcRoute(r))
		}
	}
	slices.SortStableFunc(res.Routes, func(a, b *RouteState) int {
		return cmp.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	for _, ge := range c.gateways {
		ge.finish()
	}
	res.Policies = c.policyStatuses(res.Routes)
	return res
}

// finish writes the listeners' status and orders their tables.
func (ge *gatewayEntry) finish() {
	gw := ge.state.Gateway
	for i, ls := range ge.state.Listeners {
		ge.state.Status.Listeners = append(ge.state.Status.Listeners, listenerStatus(gw, ls, ge.checks[i], int32(len(ge.attached[i]))))
		ls.Hosts = mergeHosts(ge.hosts[i])
	}
	slices.SortStableFunc(ge.state.Routes, func(a, b *RouteState) int {
		return cmp.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	ge.state.Routes = slices.Compact(ge.state.Routes)
}

// mergeHosts orders a listener's tables most specific hostname first and
// makes each table whole: its own routes' matches in precedence order,
// then those of each less specific hostname that covers it (a wildcard
// that matches it, then ""), as the spec gives precedence to the route
// with the longer matching hostname before comparing matches. A match
// that is already in the table is not repeated.
func mergeHosts(own map[string]*Host) []*Host {
	names := make([]string, 0, len(own))
	for name, h := range own {
		slices.SortFunc(h.HTTP, func(a, b HTTPEntry) int { return compareHTTP(&a, &b) })
		slices.SortFunc(h.GRPC, func(a, b GRPCEntry) int { return compareGRPC(&a, &b) })
		names = append(names, name)
	}
	slices.SortFunc(names, compareHostnames)
	out := make([]*Host, 0, len(names))
	for _, name := range names {
		merged := &Host{Hostname: name}
		seen := map[Ref]bool{}
		for _, other := range names {
			if !covers(other, name) {
				continue
			}
			for _, e := range own[other].HTTP {
				if !seen[e.Ref] {
					seen[e.Ref] = true
					merged.HTTP = append(merged.HTTP, e)
				}
			}
			for _, e := range own[other].GRPC {
				if !seen[e.Ref] {
					seen[e.Ref] = true
					merged.GRPC = append(merged.GRPC, e)
				}
			}
		}
		out = append(out, merged)
	}
	return out
}
