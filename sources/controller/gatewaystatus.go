package controller

import (
	"context"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/sources/gatewayapi"
	"github.com/ramjet-dev/ramjet/sources/gatewayservice"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// GatewayResult is the Gateway API input's result of an outcome, or nil
// when that input did not run.
func GatewayResult(o Outcome) *gatewayapi.Result {
	if o.Output == nil || o.Output.Inputs[gatewayapi.Name] == nil {
		return nil
	}
	res, _ := o.Output.Inputs[gatewayapi.Name].Detail.(*gatewayapi.Result)
	return res
}

// GatewayStatus writes the statuses the Gateway API input computed to the
// status subresource of our GatewayClasses, their Gateways, the
// HTTPRoutes and GRPCRoutes attached to them and the BackendTLSPolicies.
// A route's entries also say what the merge with the other inputs' objects
// left out of it (gatewayapi.RouteState.ParentsWith).
//
// It writes with an update carrying the resourceVersion of the object it
// read, not a patch: status.parents and status.ancestors are lists shared
// with other controllers and replaced whole by a merge patch or by an
// apply of their atomic list, and the Gateway API asks for a
// read-modify-write of them, which the resourceVersion makes safe. A
// conflict reads the object again and merges once more; a write that still
// fails is tried again at the next report. Of routes and policies, only
// the entries of our controller change (see mergeParents); the routes that
// no longer name a Gateway of ours lose our entries.
//
// An object is written only when its merged status differs from the one
// the snapshot shows, so that a quiet cluster costs no request; a status
// just written is not written again while the snapshot still shows the
// version it was written over.
//
// Statuses are written whether or not ramjetd loaded the configuration:
// Accepted, ResolvedRefs, attachedRoutes and the addresses describe the
// objects, not the data plane. Programmed says what is served, so while
// the configuration is not loaded the Gateways' and listeners' Programmed
// conditions stay as they are on the objects (False/Pending where there is
// none yet): the data plane still serves the last loaded configuration.
type GatewayStatus struct {
	// Services, when set (the own-address mode), are the options of the
	// per-Gateway Services (GatewayServices): the problems of their plan
	// show in the Gateways' statuses (gatewayservice.Status). Nil in the
	// shared mode.
	Services *gatewayservice.Options

	client     gatewayclient.Interface
	controller gatewayv1.GatewayController
	log        *slog.Logger
	// written holds, for each object the last report wrote or found up to
	// date, what it computed and the resourceVersion it saw.
	written map[statusKey]statusMemo
	counts  struct{ written, skipped, failed atomic.Uint64 }
}

// statusKey names an object of a kind.
type statusKey struct {
	kind string
	key  snapshot.Key
}

// statusMemo is what a report wrote over: the snapshot's version of the
// object, and the computed status and published flag it merged.
type statusMemo struct {
	over      string
	computed  any
	published bool
}

// StatusCounts are the status writes of a GatewayStatus since it was made:
// Written counts the objects written, Failed those whose write failed,
// Skipped those not written because their status was up to date or their
// spec changed meanwhile. An object deleted meanwhile counts nowhere.
type StatusCounts struct {
	Written, Skipped, Failed uint64
}

// NewGatewayStatus writes the statuses of the Gateway API objects of
// controller, which must be the Options.ControllerName the input computes
// with ("" is gatewayapi.DefaultControllerName), logging to log
// (nil: slog.Default).
func NewGatewayStatus(client gatewayclient.Interface, controller gatewayv1.GatewayController, log *slog.Logger) *GatewayStatus {
	if controller == "" {
		controller = gatewayapi.DefaultControllerName
	}
	if log == nil {
		log = slog.Default()
	}
	return &GatewayStatus{client: client, controller: controller, log: log, written: map[statusKey]statusMemo{}}
}

// Counts returns the writes so far.
func (g *GatewayStatus) Counts() StatusCounts {
	return StatusCounts{Written: g.counts.written.Load(), Skipped: g.counts.skipped.Load(), Failed: g.counts.failed.Load()}
}

// Report writes the statuses of o's Gateway API result that differ from
// the objects'; it does nothing when that input did not run.
func (g *GatewayStatus) Report(ctx context.Context, o Outcome) {
	res := GatewayResult(o)
	if res == nil || o.Snapshot == nil {
		return
	}
	before := g.Counts()
	r := &report{g: g, now: metav1.NewTime(time.Now()), published: o.Published, next: map[statusKey]statusMemo{}}
	classes, gateways, routes, grpc, policies := r.classes(), r.gateways(), r.httpRoutes(), r.grpcRoutes(), r.policies()
	for _, c := range res.Classes {
		writeStatus(ctx, r, classes, c.Class, c.Status)
	}
	problems := g.serviceProblems(o, res)
	for _, gw := range res.Gateways {
		key := snapshot.Key{Namespace: gw.Gateway.Namespace, Name: gw.Gateway.Name}
		writeStatus(ctx, r, gateways, gw.Gateway, gatewayservice.Status(gw.Gateway, gw.Status, problems[key]))
	}
	ours := map[statusKey]bool{}
	findings := routeFindings(o.Output.Findings)
	for _, rt := range res.Routes {
		key := statusKey{rt.Kind, rt.Key()}
		ours[key] = true
		computed := gatewayv1.RouteStatus{Parents: rt.ParentsWith(findings[key])}
		if rt.HTTP != nil {
			writeStatus(ctx, r, routes, rt.HTTP, computed)
		} else {
			writeStatus(ctx, r, grpc, rt.GRPC, computed)
		}
	}
	for _, p := range res.Policies {
		writeStatus(ctx, r, policies, p.Policy, p.Status)
	}
	r.clearRoutes(ctx, o.Snapshot, ours, routes, grpc)
	g.written = r.next
	after := g.Counts()
	if after != before {
		g.log.Debug("Gateway API statuses reported", "written", after.Written-before.Written,
			"skipped", after.Skipped-before.Skipped, "failed", after.Failed-before.Failed)
	}
}

// serviceProblems are the problems of the per-Gateway Services, by
// Gateway; none without Services.
func (g *GatewayStatus) serviceProblems(o Outcome, res *gatewayapi.Result) map[snapshot.Key][]gatewayservice.Problem {
	if g.Services == nil {
		return nil
	}
	out := map[snapshot.Key][]gatewayservice.Problem{}
	for _, p := range servicePlan(o, res, *g.Services).Problems {
		out[p.Gateway] = append(out[p.Gateway], p)
	}
	return out
}

// routeFindings are the findings about routes, by route: the merge of
// every input's contributions leaves out what an older Ingress or Gateway
// holds, and the routes' status says so (gatewayapi.RouteConditionConflicted).
func routeFindings(fs []core.Finding) map[statusKey][]core.Finding {
	out := map[statusKey][]core.Finding{}
	for _, f := range fs {
		if f.Object.Kind == "HTTPRoute" || f.Object.Kind == "GRPCRoute" {
			key := statusKey{f.Object.Kind, snapshot.Key{Namespace: f.Object.Namespace, Name: f.Object.Name}}
			out[key] = append(out[key], f)
		}
	}
	return out
}

// report is one Report's state.
type report struct {
	g         *GatewayStatus
	now       metav1.Time
	published bool
	// next becomes GatewayStatus.written.
	next map[statusKey]statusMemo
}

// clearRoutes removes our entries from the routes that no longer have a
// parentRef to a Gateway of ours (they are not in the result).
func (r *report) clearRoutes(ctx context.Context, snap *snapshot.Snapshot, ours map[statusKey]bool,
	routes kind[*gatewayv1.HTTPRoute, gatewayv1.RouteStatus], grpc kind[*gatewayv1.GRPCRoute, gatewayv1.RouteStatus]) {
	for _, rt := range snap.HTTPRoutes {
		if !ours[statusKey{routes.name, snapshot.Key{Namespace: rt.Namespace, Name: rt.Name}}] && r.hasOurs(rt.Status.Parents) {
			writeStatus(ctx, r, routes, rt, gatewayv1.RouteStatus{})
		}
	}
	for _, rt := range snap.GRPCRoutes {
		if !ours[statusKey{grpc.name, snapshot.Key{Namespace: rt.Namespace, Name: rt.Name}}] && r.hasOurs(rt.Status.Parents) {
			writeStatus(ctx, r, grpc, rt, gatewayv1.RouteStatus{})
		}
	}
}

func (r *report) hasOurs(parents []gatewayv1.RouteParentStatus) bool {
	return slices.ContainsFunc(parents, func(p gatewayv1.RouteParentStatus) bool { return p.ControllerName == r.g.controller })
}

// statusObject is a Gateway API object as its clientset returns it.
type statusObject[T any] interface {
	metav1.Object
	DeepCopy() T
}

// kind is how the status S of objects T is read, merged and written.
type kind[T statusObject[T], S any] struct {
	name   string
	status func(T) *S
	merge  func(current, computed S, obj T) S
	get    func(ctx context.Context, namespace, name string) (T, error)
	update func(ctx context.Context, obj T) (T, error)
}

// writeStatus writes computed, merged into obj's status, unless the
// result is what obj has or what the last report wrote over the same
// version of obj.
func writeStatus[T statusObject[T], S any](ctx context.Context, r *report, k kind[T, S], obj T, computed S) {
	key := statusKey{k.name, snapshot.Key{Namespace: obj.GetNamespace(), Name: obj.GetName()}}
	memo := statusMemo{over: obj.GetResourceVersion(), computed: computed, published: r.published}
	if last, ok := r.g.written[key]; ok && last.over == memo.over && last.published == memo.published &&
		equality.Semantic.DeepEqual(last.computed, computed) {
		r.g.counts.skipped.Add(1)
		r.next[key] = last
		return
	}
	err := update(ctx, r, k, obj, computed)
	switch {
	case apierrors.IsNotFound(err):
		// Deleted meanwhile: the watch brings a rebuild without it.
	case err != nil:
		r.g.counts.failed.Add(1)
		r.g.log.Warn("writing a Gateway API status failed; it is tried again", "kind", k.name, "object", key.key.String(), "error", err)
	default:
		r.next[key] = memo
	}
}

// update merges computed into obj's status and writes it when it differs;
// on a conflict it reads the object again and tries once more, unless the
// object's spec changed meanwhile (a rebuild computes it anew).
func update[T statusObject[T], S any](ctx context.Context, r *report, k kind[T, S], obj T, computed S) error {
	for attempt := 0; ; attempt++ {
		desired := k.merge(*k.status(obj), computed, obj)
		if equality.Semantic.DeepEqual(desired, *k.status(obj)) {
			r.g.counts.skipped.Add(1)
			return nil
		}
		next := obj.DeepCopy()
		*k.status(next) = desired
		_, err := k.update(ctx, next)
		if err == nil {
			r.g.counts.written.Add(1)
			return nil
		}
		if !apierrors.IsConflict(err) || attempt > 0 {
			return err
		}
		fresh, err := k.get(ctx, obj.GetNamespace(), obj.GetName())
		if err != nil {
			return err
		}
		if fresh.GetGeneration() != obj.GetGeneration() {
			r.g.counts.skipped.Add(1)
			return nil
		}
		obj = fresh
	}
}

func (r *report) classes() kind[*gatewayv1.GatewayClass, gatewayv1.GatewayClassStatus] {
	c := r.g.client.GatewayV1().GatewayClasses()
	return kind[*gatewayv1.GatewayClass, gatewayv1.GatewayClassStatus]{
		name:   "GatewayClass",
		status: func(o *gatewayv1.GatewayClass) *gatewayv1.GatewayClassStatus { return &o.Status },
		merge: func(cur, computed gatewayv1.GatewayClassStatus, _ *gatewayv1.GatewayClass) gatewayv1.GatewayClassStatus {
			return mergeClassStatus(cur, computed, r.now)
		},
		get: func(ctx context.Context, _, name string) (*gatewayv1.GatewayClass, error) {
			return c.Get(ctx, name, metav1.GetOptions{})
		},
		update: func(ctx context.Context, o *gatewayv1.GatewayClass) (*gatewayv1.GatewayClass, error) {
			return c.UpdateStatus(ctx, o, metav1.UpdateOptions{})
		},
	}
}

func (r *report) gateways() kind[*gatewayv1.Gateway, gatewayv1.GatewayStatus] {
	v1 := r.g.client.GatewayV1()
	return kind[*gatewayv1.Gateway, gatewayv1.GatewayStatus]{
		name:   "Gateway",
		status: func(o *gatewayv1.Gateway) *gatewayv1.GatewayStatus { return &o.Status },
		merge: func(cur, computed gatewayv1.GatewayStatus, _ *gatewayv1.Gateway) gatewayv1.GatewayStatus {
			return mergeGatewayStatus(cur, computed, r.now, !r.published)
		},
		get: func(ctx context.Context, namespace, name string) (*gatewayv1.Gateway, error) {
			return v1.Gateways(namespace).Get(ctx, name, metav1.GetOptions{})
		},
		update: func(ctx context.Context, o *gatewayv1.Gateway) (*gatewayv1.Gateway, error) {
			return v1.Gateways(o.Namespace).UpdateStatus(ctx, o, metav1.UpdateOptions{})
		},
	}
}

func (r *report) httpRoutes() kind[*gatewayv1.HTTPRoute, gatewayv1.RouteStatus] {
	v1 := r.g.client.GatewayV1()
	return kind[*gatewayv1.HTTPRoute, gatewayv1.RouteStatus]{
		name:   "HTTPRoute",
		status: func(o *gatewayv1.HTTPRoute) *gatewayv1.RouteStatus { return &o.Status.RouteStatus },
		merge: func(cur, computed gatewayv1.RouteStatus, o *gatewayv1.HTTPRoute) gatewayv1.RouteStatus {
			return gatewayv1.RouteStatus{Parents: mergeParents(cur.Parents, computed.Parents, r.g.controller, o.Namespace, r.now)}
		},
		get: func(ctx context.Context, namespace, name string) (*gatewayv1.HTTPRoute, error) {
			return v1.HTTPRoutes(namespace).Get(ctx, name, metav1.GetOptions{})
		},
		update: func(ctx context.Context, o *gatewayv1.HTTPRoute) (*gatewayv1.HTTPRoute, error) {
			return v1.HTTPRoutes(o.Namespace).UpdateStatus(ctx, o, metav1.UpdateOptions{})
		},
	}
}

func (r *report) grpcRoutes() kind[*gatewayv1.GRPCRoute, gatewayv1.RouteStatus] {
	v1 := r.g.client.GatewayV1()
	return kind[*gatewayv1.GRPCRoute, gatewayv1.RouteStatus]{
		name:   "GRPCRoute",
		status: func(o *gatewayv1.GRPCRoute) *gatewayv1.RouteStatus { return &o.Status.RouteStatus },
		merge: func(cur, computed gatewayv1.RouteStatus, o *gatewayv1.GRPCRoute) gatewayv1.RouteStatus {
			return gatewayv1.RouteStatus{Parents: mergeParents(cur.Parents, computed.Parents, r.g.controller, o.Namespace, r.now)}
		},
		get: func(ctx context.Context, namespace, name string) (*gatewayv1.GRPCRoute, error) {
			return v1.GRPCRoutes(namespace).Get(ctx, name, metav1.GetOptions{})
		},
		update: func(ctx context.Context, o *gatewayv1.GRPCRoute) (*gatewayv1.GRPCRoute, error) {
			return v1.GRPCRoutes(o.Namespace).UpdateStatus(ctx, o, metav1.UpdateOptions{})
		},
	}
}

func (r *report) policies() kind[*gatewayv1.BackendTLSPolicy, gatewayv1.PolicyStatus] {
	v1 := r.g.client.GatewayV1()
	return kind[*gatewayv1.BackendTLSPolicy, gatewayv1.PolicyStatus]{
		name:   "BackendTLSPolicy",
		status: func(o *gatewayv1.BackendTLSPolicy) *gatewayv1.PolicyStatus { return &o.Status },
		merge: func(cur, computed gatewayv1.PolicyStatus, o *gatewayv1.BackendTLSPolicy) gatewayv1.PolicyStatus {
			return gatewayv1.PolicyStatus{Ancestors: mergeAncestors(cur.Ancestors, computed.Ancestors, r.g.controller, o.Namespace, r.now)}
		},
		get: func(ctx context.Context, namespace, name string) (*gatewayv1.BackendTLSPolicy, error) {
			return v1.BackendTLSPolicies(namespace).Get(ctx, name, metav1.GetOptions{})
		},
		update: func(ctx context.Context, o *gatewayv1.BackendTLSPolicy) (*gatewayv1.BackendTLSPolicy, error) {
			return v1.BackendTLSPolicies(o.Namespace).UpdateStatus(ctx, o, metav1.UpdateOptions{})
		},
	}
}
