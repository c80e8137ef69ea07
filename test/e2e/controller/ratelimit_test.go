package controller

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// The rate-limit annotations.
const (
	limitRPS         = "nginx.ingress.kubernetes.io/limit-rps"
	limitMultiplier  = "nginx.ingress.kubernetes.io/limit-burst-multiplier"
	limitConnections = "nginx.ingress.kubernetes.io/limit-connections"
	limitAllowlist   = "nginx.ingress.kubernetes.io/limit-allowlist"
)

// TestLimitRPS: three Ingresses with limit-rps: "1" and a burst of 1
// (limit-burst-multiplier: "1"), so that a client with a full bucket makes
// two requests at once. The test's client (127.0.0.1) sending requests one
// after the other gets 503 from ramjetd beyond them, on an Ingress without
// an allow list and on one whose allow list does not cover it; a second
// later it is served again. The Ingress whose limit-allowlist covers
// 127.0.0.0/8 serves every request. The zone is the Ingress's: the client
// that spent its bucket on one host of an Ingress is refused on its other
// host too, and a forged X-Forwarded-For does not make it another client.
func TestLimitRPS(t *testing.T) {
	e := newEnv(t)
	e.service("web", e.backend("web"))
	r := e.startRamjet()
	client := r.Client(nil)
	limit := map[string]string{limitRPS: "1", limitMultiplier: "1"}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range []map[string]string{limit, extra} {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	limited := e.ingress("limited", e.host("limited"), "web", limit)
	second := *limited.Spec.Rules[0].DeepCopy()
	second.Host = e.host("second")
	limited.Spec.Rules = append(limited.Spec.Rules, second)
	e.create(limited)
	e.create(e.ingress("elsewhere", e.host("elsewhere"), "web", with(map[string]string{limitAllowlist: "10.0.0.0/8, 192.168.0.1"})))
	e.create(e.ingress("exempt", e.host("exempt"), "web", with(map[string]string{limitAllowlist: "10.0.0.0/8, 127.0.0.0/8, ::1"})))

	for _, name := range []string{"limited", "elsewhere"} {
		t.Run(name, func(t *testing.T) {
			url := "http://" + e.host(name) + "/"
			expect(t, client, url, "web")
			checkLimited(t, client, url, http.StatusServiceUnavailable, 2)
			if name == "limited" {
				a, err := get(t.Context(), client, "http://"+e.host("second")+"/")
				if err != nil || a.status != http.StatusServiceUnavailable || a.backend != "" {
					t.Errorf("the Ingress's other host, once the client spent its bucket: %s (%v), want 503 from ramjetd", a, err)
				}
				// The client is its address: a forged X-Forwarded-For
				// (ramjetd trusts no proxy here) does not make another.
				served := 0
				for i := range 5 {
					resp := send(t, client, url, map[string]string{"X-Forwarded-For": fmt.Sprintf("203.0.113.%d", i+1)})
					if resp.StatusCode == http.StatusOK {
						served++
					}
				}
				if served > 1 {
					t.Errorf("%d of 5 requests with forged X-Forwarded-For addresses served, want at most 1 (a second's refill)", served)
				}
			}
			eventually(t, 5*time.Second, "a second later, the client is served again", func() error {
				return check(t.Context(), client, url, "web")
			})
		})
	}
	t.Run("exempt", func(t *testing.T) {
		url := "http://" + e.host("exempt") + "/"
		expect(t, client, url, "web")
		for i := range 20 {
			if err := check(t.Context(), client, url, "web"); err != nil {
				t.Fatalf("request %d of a client the allow list covers: %v", i+1, err)
			}
		}
	})
}

// checkLimited sends 20 requests one after the other to url (one was
// served just before) and checks that ramjetd answers status to those
// beyond burst (the requests the bucket holds, plus one a second it
// refills), and serves the others.
func checkLimited(t *testing.T, client *http.Client, url string, status, burst int) {
	t.Helper()
	start := time.Now()
	served, refused := 0, 0
	for range 20 {
		a, err := get(t.Context(), client, url)
		switch {
		case err != nil:
			t.Fatal(err)
		case a.status == http.StatusOK && a.backend == "web":
			served++
		case a.status == status && a.backend == "":
			refused++
		default:
			t.Fatalf("GET %s: %s, want 200 from web or %d from ramjetd", url, a, status)
		}
	}
	// The request served before this burst took one of the bucket's.
	allowed := burst - 1 + int(time.Since(start).Seconds()) + 1
	t.Logf("GET %s 20 times in %s: %d served, %d refused", url, time.Since(start).Round(time.Millisecond), served, refused)
	if refused == 0 || served > allowed {
		t.Errorf("GET %s 20 times in %s: %d served, %d refused with %d; want at most %d served", url, time.Since(start).Round(time.Millisecond), served, refused, status, allowed)
	}
}

// TestLimitConnections: with --limit-status-code=429, an Ingress with
// limit-connections: "2" refuses a client's third request in flight with
// 429 while two are held by the member, and serves it once they ended;
// over HTTP/2 each stream counts (the client keeps its connection);
// requests the client gives up free their places, round after round.
// An Ingress with limit-rps answers 429 too beyond its burst.
func TestLimitConnections(t *testing.T) {
	e := newEnv(t)
	h1, h2, h3 := newHolder(), newHolder(), newHolder()
	for _, h := range []*holder{h1, h2, h3} {
		t.Cleanup(h.release)
	}
	e.service("web", e.network.Backend(t, "web", h1))
	e.service("web2", e.network.Backend(t, "web", h2))
	e.service("web3", e.network.Backend(t, "web", h3))
	e.service("plain", e.backend("web"))
	r := e.startRamjet("--limit-status-code=429")
	e.create(e.ingress("conns", e.host("conns"), "web", map[string]string{limitConnections: "2"}))
	e.create(e.ingress("streams", e.host("streams"), "web2", map[string]string{limitConnections: "2"}))
	e.create(e.ingress("gaveup", e.host("gaveup"), "web3", map[string]string{limitConnections: "2"}))
	e.create(e.ingress("rps", e.host("rps"), "plain", map[string]string{limitRPS: "1", limitMultiplier: "1"}))

	t.Run("HTTP/1.1", func(t *testing.T) {
		checkInFlight(t, r.Client(nil), "http://"+e.host("conns")+"/", h1, "HTTP/1.1")
	})
	t.Run("HTTP/2", func(t *testing.T) {
		checkInFlight(t, http2Client(r), "https://"+e.host("streams")+"/", h2, "HTTP/2.0")
	})
	t.Run("requests the client gave up", func(t *testing.T) {
		client := r.Client(nil)
		url := "http://" + e.host("gaveup") + "/"
		expect(t, client, url, "web")
		for round := range 3 {
			ctx, cancel := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			base := h3.held.Load()
			for range 2 {
				wg.Go(func() { _, _ = get(ctx, client, url+"hold") })
			}
			eventually(t, wait, "the member holds two requests", func() error {
				if n := h3.held.Load() - base; n != 2 {
					return fmt.Errorf("%d held", n)
				}
				return nil
			})
			if a, err := get(t.Context(), client, url); err != nil || a.status != http.StatusTooManyRequests {
				t.Errorf("round %d, a third request in flight: %s (%v), want 429", round+1, a, err)
			}
			cancel()
			wg.Wait()
			eventually(t, 5*time.Second, "the requests the client gave up free their places", func() error {
				return check(t.Context(), client, url, "web")
			})
		}
	})
	t.Run("limit-rps", func(t *testing.T) {
		client := r.Client(nil)
		rps := "http://" + e.host("rps") + "/"
		expect(t, client, rps, "web")
		checkLimited(t, client, rps, http.StatusTooManyRequests, 2)
	})
}

// checkInFlight checks limit-connections: "2" on url, whose member is h:
// with two requests held, a third gets 429 from ramjetd; once they ended,
// the client is served again. Every answer is of protocol proto.
func checkInFlight(t *testing.T, client *http.Client, url string, h *holder, proto string) {
	t.Helper()
	expect(t, client, url, "web")
	var wg sync.WaitGroup
	held := make([]answer, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() { held[i], errs[i] = get(t.Context(), client, url+"hold") })
	}
	eventually(t, wait, "the member holds two requests", func() error {
		if n := h.held.Load(); n != 2 {
			return fmt.Errorf("%d held", n)
		}
		return nil
	})
	a, err := get(t.Context(), client, url)
	if err != nil {
		t.Fatal(err)
	}
	if a.status != http.StatusTooManyRequests || a.backend != "" || a.response.Proto != proto {
		t.Errorf("a third request in flight: %s over %s, want 429 from ramjetd over %s", a, a.response.Proto, proto)
	}
	h.release()
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil || held[i].status != http.StatusOK || held[i].backend != "web" {
			t.Errorf("held request %d: %s (%v), want 200 from web", i, held[i], errs[i])
		}
	}
	eventually(t, 5*time.Second, "once the held requests ended, the client is served", func() error {
		return check(t.Context(), client, url, "web")
	})
}

// http2Client is an HTTPS client of r speaking HTTP/2 and keeping its
// connections, without verifying the certificate.
func http2Client(r *harness.Ramjet) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	transport := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, r.HTTPS)
		},
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, // the fake certificate
		ForceAttemptHTTP2: true,
	}
	return &http.Client{Transport: transport, Timeout: 10 * time.Second}
}

// holder is a member answering X-Backend: web; it holds the requests for
// /hold until release.
type holder struct {
	held     atomic.Int32
	released chan struct{}
	once     sync.Once
}

func newHolder() *holder { return &holder{released: make(chan struct{})} }

func (h *holder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/hold" {
		h.held.Add(1)
		select {
		case <-h.released:
		case <-r.Context().Done():
		case <-time.After(wait):
		}
	}
	w.Header().Set("X-Backend", "web")
}

func (h *holder) release() { h.once.Do(func() { close(h.released) }) }

// TestLimitAcrossReload: the counts survive a reload of ramjetd's
// configuration (another Ingress created). A client that spent its
// limit-rpm: "1" bucket is still refused after the reload; requests in
// flight when the configuration changed still count under
// limit-connections: "2", and free their places when they end, so the
// client can again have two in flight, and no third.
func TestLimitAcrossReload(t *testing.T) {
	e := newEnv(t)
	first, second := newHolder(), newHolder()
	t.Cleanup(first.release)
	t.Cleanup(second.release)
	e.service("web", e.backend("web"))
	hold := &switching{}
	hold.set(first)
	e.service("held", e.network.Backend(t, "web", hold))
	r := e.startRamjet()
	client := r.Client(nil)
	e.create(e.ingress("rpm", e.host("rpm"), "web", map[string]string{"nginx.ingress.kubernetes.io/limit-rpm": "1", limitMultiplier: "1"}))
	e.create(e.ingress("conns", e.host("conns"), "held", map[string]string{limitConnections: "2"}))
	rpm, conns := "http://"+e.host("rpm")+"/", "http://"+e.host("conns")+"/"
	expect(t, client, rpm, "web")
	expect(t, client, conns, "web")
	checkLimited(t, client, rpm, http.StatusServiceUnavailable, 2)

	results := holdTwo(t, client, conns, first)
	reload := func(name string) {
		t.Helper()
		before := mustGeneration(t, r)
		e.create(e.ingress(name, e.host(name), "web", nil))
		expect(t, client, "http://"+e.host(name)+"/", "web")
		if after := mustGeneration(t, r); after == before {
			t.Fatalf("creating the Ingress %s did not reload ramjetd (generation %d)", name, after)
		}
	}
	reload("other")

	if a, err := get(t.Context(), client, rpm); err != nil || a.status != http.StatusServiceUnavailable {
		t.Errorf("limit-rpm after the reload: %s (%v), want 503: the client's spent bucket was forgotten", a, err)
	}
	if a, err := get(t.Context(), client, conns); err != nil || a.status != http.StatusServiceUnavailable {
		t.Errorf("a third request in flight after the reload: %s (%v), want 503", a, err)
	}
	hold.set(second)
	first.release()
	for i, res := range results() {
		if res.err != nil || res.a.status != http.StatusOK {
			t.Errorf("request %d held across the reload: %s (%v), want 200", i, res.a, res.err)
		}
	}
	reload("again")
	eventually(t, 5*time.Second, "once the held requests ended, the client is served", func() error {
		return check(t.Context(), client, conns, "web")
	})
	results = holdTwo(t, client, conns, second)
	if a, err := get(t.Context(), client, conns); err != nil || a.status != http.StatusServiceUnavailable {
		t.Errorf("a third request in flight, the places of the first two freed: %s (%v), want 503", a, err)
	}
	second.release()
	for i, res := range results() {
		if res.err != nil || res.a.status != http.StatusOK {
			t.Errorf("request %d held the second time: %s (%v), want 200", i, res.a, res.err)
		}
	}
}

// held is the outcome of a request held by a member.
type held struct {
	a   answer
	err error
}

// holdTwo sends two requests for /hold to url and waits until h holds
// them; the function it returns waits for their answers.
func holdTwo(t *testing.T, client *http.Client, url string, h *holder) func() []held {
	t.Helper()
	var wg sync.WaitGroup
	out := make([]held, 2)
	for i := range 2 {
		wg.Go(func() { out[i].a, out[i].err = get(t.Context(), client, url+"hold") })
	}
	eventually(t, wait, "the member holds two requests", func() error {
		if n := h.held.Load(); n != 2 {
			return fmt.Errorf("%d held", n)
		}
		return nil
	})
	return func() []held {
		wg.Wait()
		return out
	}
}

// switching is a member whose holder can be replaced between rounds.
type switching struct {
	mu sync.Mutex
	h  *holder
}

func (s *switching) set(h *holder) {
	s.mu.Lock()
	s.h = h
	s.mu.Unlock()
}

func (s *switching) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	h := s.h
	s.mu.Unlock()
	h.ServeHTTP(w, r)
}

// TestLimitRate: limit-rate: "64" (KiB/s) with limit-rate-after: "64" on
// an answer of 320 KiB: the first 64 KiB come at full speed, the rest at
// 64 KiB/s, one second of which may run ahead (nginx's limit_rate), so the
// whole answer takes three seconds (the test allows 2.5); the same answer
// through an Ingress without the keys comes at once. Both come whole.
func TestLimitRate(t *testing.T) {
	e := newEnv(t)
	body := strings.Repeat("x", 320<<10)
	e.service("big", e.network.Backend(t, "big", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Backend", "big")
		_, _ = io.WriteString(w, body)
	})))
	r := e.startRamjet()
	client := r.Client(nil)
	e.create(e.ingress("slow", e.host("slow"), "big", map[string]string{
		"nginx.ingress.kubernetes.io/limit-rate":       "64",
		"nginx.ingress.kubernetes.io/limit-rate-after": "64",
	}))
	e.create(e.ingress("fast", e.host("fast"), "big", nil))
	for _, name := range []string{"fast", "slow"} {
		eventually(t, wait, name+" is served", func() error {
			resp, err := client.Head("http://" + e.host(name) + "/")
			if err == nil {
				resp.Body.Close()
				if resp.Header.Get("X-Backend") != "big" {
					err = fmt.Errorf("%d from %q", resp.StatusCode, resp.Header.Get("X-Backend"))
				}
			}
			return err
		})
	}
	for _, tc := range []struct {
		name    string
		atLeast time.Duration
	}{{"fast", 0}, {"slow", 2500 * time.Millisecond}} { // 3 s, less a margin for how the second ahead is counted
		start := time.Now()
		a, err := get(t.Context(), client, "http://"+e.host(tc.name)+"/")
		took := time.Since(start)
		t.Logf("%s: %d bytes in %s", tc.name, len(a.body), took.Round(time.Millisecond))
		switch {
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case a.status != http.StatusOK || a.body != body:
			t.Errorf("%s: %s, %d bytes; want 200 with the member's %d", tc.name, a, len(a.body), len(body))
		case took < tc.atLeast:
			t.Errorf("%s: 320 KiB in %s, want %s at least (64 KiB/s after 64 KiB)", tc.name, took, tc.atLeast)
		}
	}
}
