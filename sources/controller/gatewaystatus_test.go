package controller

import (
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/client-go/rest"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/sources"
	"github.com/ramjet-dev/ramjet/sources/gatewayapi"
	"github.com/ramjet-dev/ramjet/sources/gatewayservice"
	"github.com/ramjet-dev/ramjet/sources/input"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
	"github.com/ramjet-dev/ramjet/test/harness"
)

// gatewayCRDs is the folder of the Gateway API's standard CRDs in the
// module cache, of the version the module requires.
func gatewayCRDs(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		t.Fatalf("finding the gateway-api module: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
}

// requestCounter counts a client's requests by method.
type requestCounter struct {
	next       http.RoundTripper
	puts, gets atomic.Int64
}

func (c *requestCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodPut:
		c.puts.Add(1)
	case http.MethodGet:
		c.gets.Add(1)
	}
	return c.next.RoundTrip(req)
}

// gatewayFixture is an API server with a GatewayClass, a Gateway and an
// HTTPRoute, and a reporter whose requests are counted.
type gatewayFixture struct {
	t        *testing.T
	admin    gatewayclient.Interface
	requests *requestCounter
	reporter *GatewayStatus
}

func newGatewayFixture(t *testing.T) *gatewayFixture {
	c := harness.StartAPIServer(t, harness.WithCRDs(gatewayCRDs(t)))
	admin, err := gatewayclient.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	f := &gatewayFixture{t: t, admin: admin, requests: &requestCounter{}}
	cfg := rest.CopyConfig(c.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { f.requests.next = rt; return f.requests })
	client, err := gatewayclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.reporter = NewGatewayStatus(client, us, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := t.Context()
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, harness.Namespace("shop"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "ramjet"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: us}}
	if _, err := admin.GatewayV1().GatewayClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: "ramjet",
		Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
	}}
	if _, err := admin.GatewayV1().Gateways("shop").Create(ctx, gw, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "store"}, Spec: gatewayv1.HTTPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{gatewayRef("edge"), gatewayRef("web")}},
		Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{Name: "store", Port: new(gatewayv1.PortNumber(80))}}}}}},
	}}
	if _, err := admin.GatewayV1().HTTPRoutes("shop").Create(ctx, route, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.setForeign("Accepted")
	return f
}

// setForeign writes the other controller's entry, for the Gateway edge,
// with the reason given, in the place of its earlier one, or first.
func (f *gatewayFixture) setForeign(reason string) {
	f.t.Helper()
	route := f.route()
	entry := parent(other, defaulted(gatewayRef("edge")), cond("Accepted", metav1.ConditionTrue, reason, route.Generation, earlier))
	i := slices.IndexFunc(route.Status.Parents, func(p gatewayv1.RouteParentStatus) bool { return p.ControllerName == other })
	if i < 0 {
		route.Status.Parents = slices.Insert(route.Status.Parents, 0, entry)
	} else {
		route.Status.Parents[i] = entry
	}
	if _, err := f.admin.GatewayV1().HTTPRoutes("shop").UpdateStatus(f.t.Context(), route, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *gatewayFixture) route() *gatewayv1.HTTPRoute {
	f.t.Helper()
	r, err := f.admin.GatewayV1().HTTPRoutes("shop").Get(f.t.Context(), "store", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// outcome lists the Gateway API objects into a snapshot, as the watch's
// caches hold them, and computes its result.
func (f *gatewayFixture) outcome(published bool) Outcome {
	f.t.Helper()
	ctx, v1 := f.t.Context(), f.admin.GatewayV1()
	snap := snapshot.New()
	classes, err := v1.GatewayClasses().List(ctx, metav1.ListOptions{})
	f.check(err)
	gateways, err := v1.Gateways("").List(ctx, metav1.ListOptions{})
	f.check(err)
	routes, err := v1.HTTPRoutes("").List(ctx, metav1.ListOptions{})
	f.check(err)
	for i := range classes.Items {
		snap.Add(&classes.Items[i])
	}
	for i := range gateways.Items {
		snap.Add(&gateways.Items[i])
	}
	for i := range routes.Items {
		snap.Add(&routes.Items[i])
	}
	snap.Sort()
	res := gatewayapi.Compute(snap, gatewayapi.Options{
		ControllerName:    us,
		SupportedFeatures: []gatewayv1.FeatureName{"HTTPRoute", "Gateway"},
		Addresses: map[snapshot.Key][]gatewayv1.GatewayStatusAddress{
			{Namespace: "shop", Name: "web"}: {{Type: new(gatewayv1.IPAddressType), Value: "198.18.0.10"}},
		},
	})
	out := &sources.Output{Result: &core.Result{}, Inputs: map[string]*input.Translation{gatewayapi.Name: {Detail: res}}}
	return Outcome{Snapshot: snap, Output: out, Published: published}
}

func (f *gatewayFixture) check(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// report reports o and returns the PUT and GET requests it made.
func (f *gatewayFixture) report(o Outcome) (puts, gets int64) {
	p, g := f.requests.puts.Load(), f.requests.gets.Load()
	f.reporter.Report(f.t.Context(), o)
	return f.requests.puts.Load() - p, f.requests.gets.Load() - g
}

// ours is the entry of our controller in a route's status.
func ours(t *testing.T, r *gatewayv1.HTTPRoute) gatewayv1.RouteParentStatus {
	t.Helper()
	for _, p := range r.Status.Parents {
		if p.ControllerName == us {
			return p
		}
	}
	t.Fatalf("no entry of %s in %v", us, r.Status.Parents)
	return gatewayv1.RouteParentStatus{}
}

func wantCondition(t *testing.T, what string, conds []metav1.Condition, typ string, status metav1.ConditionStatus, gen int64) metav1.Condition {
	t.Helper()
	c := meta.FindStatusCondition(conds, typ)
	if c == nil || c.Status != status || c.ObservedGeneration != gen || c.LastTransitionTime.IsZero() {
		t.Fatalf("%s: condition %s is %+v, want status %s, observedGeneration %d and a lastTransitionTime", what, typ, c, status, gen)
	}
	return *c
}

// TestGatewayStatusAPIServer writes the statuses of a GatewayClass, a
// Gateway and an HTTPRoute that holds another controller's entry, to a
// real API server: the first report writes the three, the same outcome
// and a fresh one write nothing, a changed route rewrites only our entry
// of it (after a conflict with the other controller), keeping the
// lastTransitionTime of an unchanged condition, a finding about the route
// adds ramjet.dev/Conflicted to our entry until it goes, and a route that
// no longer names our Gateway loses our entry only.
func TestGatewayStatusAPIServer(t *testing.T) {
	t.Parallel()
	f := newGatewayFixture(t)
	ctx, v1 := t.Context(), f.admin.GatewayV1()

	first := f.outcome(true)
	if puts, _ := f.report(first); puts != 3 {
		t.Fatalf("the first report made %d writes, want 3 (class, Gateway, route)", puts)
	}
	class, err := v1.GatewayClasses().Get(ctx, "ramjet", metav1.GetOptions{})
	f.check(err)
	wantCondition(t, "GatewayClass", class.Status.Conditions, "Accepted", metav1.ConditionTrue, 1)
	if got := class.Status.SupportedFeatures; len(got) != 2 || got[0].Name != "Gateway" || got[1].Name != "HTTPRoute" {
		t.Errorf("supportedFeatures %v, want Gateway, HTTPRoute", got)
	}
	gw, err := v1.Gateways("shop").Get(ctx, "web", metav1.GetOptions{})
	f.check(err)
	wantCondition(t, "Gateway", gw.Status.Conditions, "Programmed", metav1.ConditionTrue, 1)
	if len(gw.Status.Addresses) != 1 || gw.Status.Addresses[0].Value != "198.18.0.10" {
		t.Errorf("Gateway addresses %v, want 198.18.0.10", gw.Status.Addresses)
	}
	if l := gw.Status.Listeners; len(l) != 1 || l[0].AttachedRoutes != 1 {
		t.Errorf("listeners %+v, want http with 1 attached route", l)
	}
	route := f.route()
	foreign := route.Status.Parents[0]
	if len(route.Status.Parents) != 2 || foreign.ControllerName != other {
		t.Fatalf("parents %+v, want the other controller's entry, then ours", route.Status.Parents)
	}
	accepted := wantCondition(t, "route", ours(t, route).Conditions, "Accepted", metav1.ConditionTrue, 1)
	wantCondition(t, "route", ours(t, route).Conditions, "ResolvedRefs", metav1.ConditionFalse, 1)

	if puts, gets := f.report(first); puts+gets != 0 {
		t.Errorf("the same outcome again made %d writes and %d reads, want none", puts, gets)
	}
	if puts, _ := f.report(f.outcome(true)); puts != 0 {
		t.Errorf("a snapshot of the written statuses made %d writes, want 0", puts)
	}

	route.Spec.Rules[0].Matches = []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Value: new("/cart")}}}
	_, err = v1.HTTPRoutes("shop").Update(ctx, route, metav1.UpdateOptions{})
	f.check(err)
	changed := f.outcome(true)
	f.setForeign("Rechecked") // after the snapshot: our write conflicts
	before := f.reporter.Counts()
	if puts, gets := f.report(changed); puts != 2 || gets != 1 {
		t.Errorf("the changed route made %d writes and %d reads, want 2 and 1 (a conflict, a read, the write)", puts, gets)
	}
	if c := f.reporter.Counts(); c.Written != before.Written+1 || c.Failed != before.Failed {
		t.Errorf("counts went from %+v to %+v, want one more written", before, c)
	}
	route = f.route()
	if got := route.Status.Parents[0]; got.ControllerName != other || got.Conditions[0].Reason != "Rechecked" {
		t.Errorf("the other controller's entry is %+v, want its rewritten one first", got)
	}
	if got := wantCondition(t, "changed route", ours(t, route).Conditions, "Accepted", metav1.ConditionTrue, 2); !got.LastTransitionTime.Equal(&accepted.LastTransitionTime) {
		t.Errorf("Accepted transitioned at %v, want still %v", got.LastTransitionTime, accepted.LastTransitionTime)
	}
	if puts, _ := f.report(f.outcome(true)); puts != 0 {
		t.Errorf("a snapshot of the rewritten route made %d writes, want 0", puts)
	}

	conflicted := f.outcome(true)
	lost := core.Finding{Object: core.Origin{Kind: "HTTPRoute", Namespace: "shop", Name: "store"}, Reason: core.PathConflict,
		Message: `host "shop.example.com" of listener "http" is served by Ingress shop/web, whose claim is older`}
	conflicted.Output.Findings = []core.Finding{lost}
	if puts, _ := f.report(conflicted); puts != 1 {
		t.Errorf("a finding about the route made %d writes, want 1", puts)
	}
	got := wantCondition(t, "conflicted route", ours(t, f.route()).Conditions, string(gatewayapi.RouteConditionConflicted), metav1.ConditionTrue, 2)
	if got.Reason != string(core.PathConflict) || got.Message != lost.Message {
		t.Errorf("the Conflicted condition is %+v, want reason PathConflict and the finding's message", got)
	}
	wantCondition(t, "conflicted route", ours(t, f.route()).Conditions, "Accepted", metav1.ConditionTrue, 2)
	if puts, _ := f.report(f.outcome(true)); puts != 1 || meta.FindStatusCondition(ours(t, f.route()).Conditions, string(gatewayapi.RouteConditionConflicted)) != nil {
		t.Errorf("the finding gone made %d writes and left %+v, want 1 write and no Conflicted condition", puts, ours(t, f.route()).Conditions)
	}

	route = f.route()
	foreign = route.Status.Parents[0]
	route.Spec.ParentRefs = []gatewayv1.ParentReference{gatewayRef("edge")}
	_, err = v1.HTTPRoutes("shop").Update(ctx, route, metav1.UpdateOptions{})
	f.check(err)
	if puts, _ := f.report(f.outcome(true)); puts != 2 {
		t.Errorf("dropping our parentRef made %d writes, want 2 (route, Gateway's attachedRoutes)", puts)
	}
	if got := f.route().Status.Parents; !equality.Semantic.DeepEqual(got, []gatewayv1.RouteParentStatus{foreign}) {
		t.Errorf("parents without our parentRef differ (-want +got):\n%s", diff.Diff([]gatewayv1.RouteParentStatus{foreign}, got))
	}
}

// TestGatewayStatusServiceProblems: with per-Gateway Services, a problem
// of the Gateway's Service shows in its status on a real API server (a
// foreign Service holding the name: Programmed False, AddressNotAssigned,
// the problem as the message) and goes with the problem.
func TestGatewayStatusServiceProblems(t *testing.T) {
	t.Parallel()
	f := newGatewayFixture(t)
	f.reporter.Services = &gatewayservice.Options{Namespace: "ramjet", Selector: map[string]string{"app": "ramjet-ingress"}, ControllerName: us}
	key := snapshot.Key{Namespace: "shop", Name: "web"}
	taken := f.outcome(true)
	taken.Snapshot.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ramjet", Name: gatewayservice.ServiceName(key)}})
	f.report(taken)
	gw, err := f.admin.GatewayV1().Gateways("shop").Get(t.Context(), "web", metav1.GetOptions{})
	f.check(err)
	got := wantCondition(t, "Gateway", gw.Status.Conditions, "Programmed", metav1.ConditionFalse, 1)
	if got.Reason != string(gatewayv1.GatewayReasonAddressNotAssigned) || !strings.Contains(got.Message, "is not managed by Ramjet") {
		t.Errorf("Programmed is %+v, want AddressNotAssigned naming the foreign Service", got)
	}
	wantCondition(t, "listener", gw.Status.Listeners[0].Conditions, "Programmed", metav1.ConditionFalse, 1)

	if puts, _ := f.report(f.outcome(true)); puts != 1 {
		t.Errorf("the problem gone made %d writes, want 1", puts)
	}
	gw, err = f.admin.GatewayV1().Gateways("shop").Get(t.Context(), "web", metav1.GetOptions{})
	f.check(err)
	wantCondition(t, "Gateway", gw.Status.Conditions, "Programmed", metav1.ConditionTrue, 1)
}
