// Package controller tests `ramjet-ingress run` end to end, as a user of a
// cluster sees it: a real kube-apiserver (one for the package, started by
// TestMain), a real ramjetd and the controller as processes of their own
// (test/harness's Ramjet), and backends in a network namespace. Each test
// writes objects with the API and checks the answers ramjetd gives, the
// Ingresses' status and Events, and the controller's health and metrics.
//
// Each test has its namespace, its network and its Ramjet (which watches
// that namespace only, with a Lease of its own), so tests do not see each
// other's objects. Only the API server runs: tests write EndpointSlices
// themselves. Waits poll with a deadline; nothing sleeps to assert.
package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ramjet-dev/ramjet/dataplane/admin"
	"github.com/ramjet-dev/ramjet/test/harness"
)

// cluster is the API server every test of the package uses.
var cluster *harness.Cluster

// wait is how long a test waits for the controller to act on a change.
const wait = 30 * time.Second

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "ramjet-e2e-controller-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	c, err := harness.NewCluster(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the API server:", err)
		return 1
	}
	defer c.Close()
	cluster = c
	class := &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: "ramjet"},
		Spec:       networkingv1.IngressClassSpec{Controller: "ramjet.dev/ingress"},
	}
	if _, err := c.Client.NetworkingV1().IngressClasses().Create(context.Background(), class, metav1.CreateOptions{}); err != nil {
		fmt.Fprintln(os.Stderr, "creating the IngressClass:", err)
		return 1
	}
	code := m.Run()
	if code != 0 {
		if data, err := os.ReadFile(filepath.Join(dir, "kube-apiserver.log")); err == nil {
			fmt.Fprintf(os.Stderr, "--- last lines of kube-apiserver.log:\n%s\n", lastLines(string(data), 30))
		}
	}
	return code
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// namespaces counts the namespaces made, so that -count=N makes new ones.
var namespaces atomic.Int32

// env is a test's namespace and network.
type env struct {
	t       *testing.T
	ns      string
	network *harness.Network
	ctx     context.Context
}

// newEnv creates a namespace named after the test and a network for its
// backends.
func newEnv(t *testing.T) *env {
	t.Helper()
	name := strings.ToLower(strings.TrimPrefix(t.Name(), "Test"))
	if len(name) > 50 {
		name = name[:50]
	}
	ns := name + "-" + strconv.Itoa(int(namespaces.Add(1)))
	e := &env{t: t, ns: ns, ctx: t.Context()}
	if _, err := cluster.Client.CoreV1().Namespaces().Create(e.ctx, harness.Namespace(ns), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.network = harness.NewNetwork(t)
	return e
}

// host is a host name of the test's own.
func (e *env) host(name string) string { return name + "." + e.ns + ".test" }

// backend starts a backend that answers its name (and the header
// X-Backend).
func (e *env) backend(name string) *harness.Backend { return e.network.Backend(e.t, name, nil) }

// service creates the Service name (port 80) and its EndpointSlice with
// the backends as ready endpoints.
func (e *env) service(name string, backends ...*harness.Backend) {
	e.t.Helper()
	e.servicePort(name, harness.BackendPort, ips(backends)...)
}

// servicePort creates the Service name (port 80) forwarding to port and its
// EndpointSlice with the addresses as ready endpoints.
func (e *env) servicePort(name string, port int32, addrs ...string) {
	e.t.Helper()
	if _, err := cluster.Client.CoreV1().Services(e.ns).Create(e.ctx, harness.Service(e.ns, name, 80, port), metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := cluster.Client.DiscoveryV1().EndpointSlices(e.ns).Create(e.ctx, harness.EndpointSlice(e.ns, name, port, addrs...), metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// scale replaces the endpoints of the Service name's EndpointSlice.
func (e *env) scale(name string, backends ...*harness.Backend) {
	e.t.Helper()
	api := cluster.Client.DiscoveryV1().EndpointSlices(e.ns)
	current, err := api.Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	next := harness.EndpointSlice(e.ns, name, harness.BackendPort, ips(backends)...)
	current.Endpoints = next.Endpoints
	if _, err := api.Update(e.ctx, current, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func ips(backends []*harness.Backend) []string {
	var out []string
	for _, b := range backends {
		out = append(out, b.IP)
	}
	return out
}

// apply applies YAML objects in the test's namespace; "NS" in the text is
// replaced by the namespace's name.
func (e *env) apply(yaml string) {
	e.t.Helper()
	cluster.Apply(e.t, strings.ReplaceAll(yaml, "NS", e.ns))
}

// ingress returns an Ingress of class ramjet sending host's path / to
// service, with annotations.
func (e *env) ingress(name, host, service string, annotations map[string]string) *networkingv1.Ingress {
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name, Annotations: annotations},
		Spec: networkingv1.IngressSpec{
			IngressClassName: new("ramjet"),
			Rules: []networkingv1.IngressRule{{
				Host: host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{
						Path: "/", PathType: new(networkingv1.PathTypePrefix),
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
							Name: service, Port: networkingv1.ServiceBackendPort{Number: 80},
						}},
					}},
				}},
			}},
		},
	}
}

// create creates an Ingress.
func (e *env) create(ing *networkingv1.Ingress) *networkingv1.Ingress {
	e.t.Helper()
	out, err := cluster.Client.NetworkingV1().Ingresses(e.ns).Create(e.ctx, ing, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// setBackend points the first path of the Ingress name to service.
func (e *env) setBackend(name, service string) {
	e.t.Helper()
	ings := cluster.Client.NetworkingV1().Ingresses(e.ns)
	for attempt := 0; ; attempt++ {
		ing, err := ings.Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name = service
		_, err = ings.Update(e.ctx, ing, metav1.UpdateOptions{})
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) || attempt == 5 {
			e.t.Fatal(err)
		}
	}
}

// startRamjet starts a Ramjet that watches the test's namespace, with a
// Lease of its own (a Lease shared with another test's controller, killed
// or not, would make this one wait to report), and more flags.
func (e *env) startRamjet(args ...string) *harness.Ramjet {
	e.t.Helper()
	args = append([]string{"--watch-namespace=" + e.ns, "--election-id=ramjet-" + e.ns}, args...)
	return harness.StartRamjet(e.t, cluster, harness.RamjetOptions{Args: args})
}

// site is a test's namespace with the Services web and next (a backend
// each, answering its name) and a Ramjet serving the Ingress web, which
// sends the host web.<namespace>.test to the Service web.
type site struct {
	*env
	backends map[string]*harness.Backend
	r        *harness.Ramjet
	client   *http.Client // through r, without verifying certificates
	url      string       // http://web.<namespace>.test/
}

// newSite sets up a site, with more flags for the controller, and waits
// until the Ingress web is served.
func newSite(t *testing.T, args ...string) *site {
	t.Helper()
	e := newEnv(t)
	s := &site{env: e, backends: map[string]*harness.Backend{}, url: "http://" + e.host("web") + "/"}
	for _, name := range []string{"web", "next"} {
		s.backends[name] = e.backend(name)
		e.service(name, s.backends[name])
	}
	s.r = e.startRamjet(args...)
	s.client = s.r.Client(nil)
	e.create(e.ingress("web", e.host("web"), "web", nil))
	expect(t, s.client, s.url, "web")
	return s
}

// waitLog waits until the controller's log holds text.
func waitLog(t testing.TB, r *harness.Ramjet, text string) {
	t.Helper()
	eventually(t, wait, fmt.Sprintf("the controller logs %q", text), func() error {
		if !strings.Contains(r.Log("ramjet-ingress"), text) {
			return errors.New("not in the log yet")
		}
		return nil
	})
}

// answer is what a client got.
type answer struct {
	status int
	// backend is the X-Backend header of the backends' default handler:
	// empty when ramjetd answered itself.
	backend  string
	body     string
	header   http.Header
	response *http.Response
}

func (a answer) String() string {
	if a.backend != "" {
		return fmt.Sprintf("%d from backend %s", a.status, a.backend)
	}
	return fmt.Sprintf("%d %q", a.status, strings.TrimSpace(a.body))
}

// get sends GET url (its host names the virtual host; the scheme the
// listener) through client.
func get(ctx context.Context, client *http.Client, url string) (answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return answer{}, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, err
	}
	return answer{status: resp.StatusCode, backend: resp.Header.Get("X-Backend"), body: string(body), header: resp.Header, response: resp}, nil
}

// eventually calls check every 20 ms until it returns nil, failing t with
// its last error after timeout.
func eventually(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not so after %s: %v", what, timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// expect waits until GET url is answered by backend want ("" for a 404 of
// ramjetd).
func expect(t testing.TB, client *http.Client, url, want string) {
	t.Helper()
	expectWithin(t, wait, client, url, want)
}

// expectWithin is expect with another deadline.
func expectWithin(t testing.TB, timeout time.Duration, client *http.Client, url, want string) {
	t.Helper()
	eventually(t, timeout, "GET "+url+" answered by "+orNotFound(want), func() error {
		return check(t.Context(), client, url, want)
	})
}

// check returns an error unless GET url is answered by backend want ("" for
// a 404 of ramjetd).
func check(ctx context.Context, client *http.Client, url, want string) error {
	a, err := get(ctx, client, url)
	switch {
	case err != nil:
		return err
	case want == "" && (a.status != http.StatusNotFound || a.backend != ""):
		return fmt.Errorf("got %s, want ramjetd's 404", a)
	case want != "" && (a.status != http.StatusOK || a.backend != want):
		return fmt.Errorf("got %s, want 200 from backend %s", a, want)
	}
	return nil
}

func orNotFound(backend string) string {
	if backend == "" {
		return "nobody (404)"
	}
	return "backend " + backend
}

// load sends GET url one after the other, a few ms apart, from a goroutine,
// counting the answers that are not 200 from one of the backends it
// accepts.
type load struct {
	stop, done chan struct{}
	ok, failed atomic.Int64
	mu         sync.Mutex
	failures   []string
}

func startLoad(client *http.Client, url string, backends ...string) *load {
	l := &load{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for {
			select {
			case <-l.stop:
				return
			default:
			}
			a, err := get(context.Background(), client, url)
			if err == nil && (a.status != http.StatusOK || !slices.Contains(backends, a.backend)) {
				err = fmt.Errorf("got %s, want 200 from one of %v", a, backends)
			}
			if err != nil {
				l.failed.Add(1)
				l.mu.Lock()
				if len(l.failures) < 10 {
					l.failures = append(l.failures, time.Now().Format("15:04:05.000")+" "+err.Error())
				}
				l.mu.Unlock()
			} else {
				l.ok.Add(1)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return l
}

// finish stops the load and fails t if a request failed.
func (l *load) finish(t testing.TB) {
	t.Helper()
	close(l.stop)
	<-l.done
	ok, failed := l.ok.Load(), l.failed.Load()
	t.Logf("load: %d requests answered, %d failed", ok, failed)
	if failed > 0 {
		l.mu.Lock()
		defer l.mu.Unlock()
		t.Errorf("%d of %d requests failed; the first:\n%s", failed, ok+failed, strings.Join(l.failures, "\n"))
	}
	if ok == 0 {
		t.Error("the load sent no request")
	}
}

// metric returns the value of a sample of the controller's /metrics (name
// with its labels as exposed, e.g. `ramjet_ingress_ingresses{state="served"}`).
func metric(ctx context.Context, r *harness.Ramjet, sample string) (float64, error) {
	a, err := get(ctx, http.DefaultClient, "http://"+r.Controller+"/metrics")
	if err != nil {
		return 0, err
	}
	if a.status != http.StatusOK {
		return 0, fmt.Errorf("/metrics: %s", a)
	}
	for line := range strings.SplitSeq(a.body, "\n") {
		if value, ok := strings.CutPrefix(line, sample+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(value), 64)
		}
	}
	return 0, fmt.Errorf("/metrics has no sample %s", sample)
}

// generation is the generation of ramjetd's configuration (one more on
// every accepted reload).
func generation(ctx context.Context, r *harness.Ramjet) (uint64, error) {
	st, err := admin.NewClient(r.AdminSocket).Status(ctx)
	return st.Generation, err
}

// mustGeneration is generation, failing t on error.
func mustGeneration(t testing.TB, r *harness.Ramjet) uint64 {
	t.Helper()
	g, err := generation(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// events lists the Events about the Ingress name.
func (e *env) events(name string) ([]eventsv1.Event, error) {
	list, err := cluster.Client.EventsV1().Events(e.ns).List(e.ctx, metav1.ListOptions{FieldSelector: "regarding.kind=Ingress,regarding.name=" + name})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// waitEvent waits until the Ingress name has a Warning Event with reason
// and returns it.
func (e *env) waitEvent(name, reason string) eventsv1.Event {
	e.t.Helper()
	var found eventsv1.Event
	eventually(e.t, wait, fmt.Sprintf("a %s Event on Ingress %s", reason, name), func() error {
		list, err := e.events(name)
		if err != nil {
			return err
		}
		var seen []string
		for _, ev := range list {
			if ev.Reason == reason {
				found = ev
				return nil
			}
			seen = append(seen, ev.Reason)
		}
		return fmt.Errorf("events: %v", seen)
	})
	if found.Type != corev1.EventTypeWarning || found.ReportingController != "ramjet.dev/ingress" || found.Regarding.Namespace != e.ns {
		e.t.Errorf("Event %s: type %s, reporting controller %q, regarding %s/%s; want a Warning of ramjet.dev/ingress about %s/%s",
			found.Name, found.Type, found.ReportingController, found.Regarding.Namespace, found.Regarding.Name, e.ns, name)
	}
	return found
}
