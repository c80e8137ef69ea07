package controller

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/test/harness"
	"github.com/ramjet-dev/ramjet/test/memcached"
)

// getKeyed sends GET url through client with the header X-Client: key.
func getKeyed(t *testing.T, client *http.Client, url, key string) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Client", key)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return answer{status: resp.StatusCode, backend: resp.Header.Get("X-Backend")}
}

// waitKeyedServed waits until the limited Ingress is served through
// client, each probe with a key of its own (so that probing uses up no
// key's limit).
func waitKeyedServed(t *testing.T, client *http.Client, url, replica string) {
	t.Helper()
	n := 0
	eventually(t, wait, "the limited Ingress served by replica "+replica, func() error {
		n++
		if a := getKeyed(t, client, url, fmt.Sprintf("probe-%s-%d", replica, n)); a.status != http.StatusOK || a.backend != "web" {
			return fmt.Errorf("got %s", a)
		}
		return nil
	})
}

// TestGlobalRateLimit: two replicas (two controllers and two ramjetd) with
// --global-rate-limit-memcached-host share one Ingress's global limit
// through a real memcached.
func TestGlobalRateLimit(t *testing.T) {
	host, port, err := net.SplitHostPort(memcached.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	web := e.backend("web")
	e.service("web", web)
	flags := []string{"--global-rate-limit-memcached-host=" + host, "--global-rate-limit-memcached-port=" + port}
	one := e.startRamjet(flags...)
	two := harness.StartRamjet(t, cluster, harness.RamjetOptions{Args: append([]string{"--watch-namespace=" + e.ns, "--election-id=ramjet-" + e.ns + "-two"}, flags...)})
	e.create(e.ingress("limited", e.host("limited"), "web", map[string]string{
		"nginx.ingress.kubernetes.io/global-rate-limit":        "1",
		"nginx.ingress.kubernetes.io/global-rate-limit-window": "1h",
		"nginx.ingress.kubernetes.io/global-rate-limit-key":    "$http_x_client",
	}))
	url := "http://" + e.host("limited") + "/"
	c1, c2 := one.Client(nil), two.Client(nil)
	waitKeyedServed(t, c1, url, "one")
	waitKeyedServed(t, c2, url, "two")

	steps := []struct {
		client      *http.Client
		key, name   string
		status      int
		fromBackend bool
	}{
		{c1, "team-a", "first request", http.StatusOK, true},
		{c1, "team-a", "second request, same replica", http.StatusTooManyRequests, false},
		{c2, "team-a", "second request, other replica", http.StatusTooManyRequests, false},
		{c2, "team-b", "another key", http.StatusOK, true},
		{c1, "team-b", "another key, other replica", http.StatusTooManyRequests, false},
	}
	for i, s := range steps {
		a := getKeyed(t, s.client, url, s.key)
		if a.status != s.status || (a.backend == "web") != s.fromBackend {
			t.Errorf("step %d (%s): %s, want %d", i, s.name, a, s.status)
		}
	}
	resp, err := http.Get("http://" + one.Health + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), `ramjet_global_rate_limit_requests_total{outcome="refused"} 2`) {
		t.Errorf("replica one's ramjetd does not count its 2 refusals:\n%s", grepLines(string(body), "ramjet_global_rate_limit"))
	}
}

// TestGlobalRateLimitWithoutMemcached: without the flag, the limit is not
// served (a finding says so) and the rest of the Ingress is.
func TestGlobalRateLimitWithoutMemcached(t *testing.T) {
	s := newSite(t)
	s.create(s.ingress("limited", s.host("limited"), "web", map[string]string{
		"nginx.ingress.kubernetes.io/global-rate-limit":        "1",
		"nginx.ingress.kubernetes.io/global-rate-limit-window": "1h",
	}))
	ev := s.waitEvent("limited", "UnknownAnnotation")
	if !strings.Contains(ev.Note, "global-rate-limit is not served") {
		t.Errorf("Event note %q, want it to say the global limit is not served", ev.Note)
	}
	url := "http://" + s.host("limited") + "/"
	for i := 0; i < 3; i++ {
		expect(t, s.client, url, "web")
	}
}

// grepLines are the lines of s that contain text.
func grepLines(s, text string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, text) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
