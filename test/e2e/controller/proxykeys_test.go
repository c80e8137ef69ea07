package controller

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// The proxy annotations.
const (
	nextUpstream      = "nginx.ingress.kubernetes.io/proxy-next-upstream"
	nextUpstreamTries = "nginx.ingress.kubernetes.io/proxy-next-upstream-tries"
)

// TestProxyNextUpstream: a Service of two members, one answering and one
// that reads each request and closes the connection without an answer.
// With proxy-next-upstream: "error timeout" and -tries: "2", every GET is
// answered by the good member, those that reached the broken one being
// tried again; a POST that reached the broken member is not sent again
// (502), each POST reaching one member only. With -tries: "1", the GETs
// that reached the broken member answer 502.
func TestProxyNextUpstream(t *testing.T) {
	e := newEnv(t)
	good, broken := &counting{handler: nameHandler("good")}, &counting{handler: closer{}}
	e.service("pair", e.network.Backend(t, "good", good), e.network.Backend(t, "broken", broken))
	r := e.startRamjet()
	client := r.Client(nil)
	e.create(e.ingress("retried", e.host("retried"), "pair", map[string]string{nextUpstream: "error timeout", nextUpstreamTries: "2"}))
	e.create(e.ingress("once", e.host("once"), "pair", map[string]string{nextUpstream: "error timeout", nextUpstreamTries: "1"}))
	retried, once := "http://"+e.host("retried")+"/", "http://"+e.host("once")+"/"
	expect(t, client, retried, "good")
	expect(t, client, once, "good")

	t.Run("GET retried", func(t *testing.T) {
		before := broken.get.Load()
		for i := range 20 {
			if err := check(t.Context(), client, retried, "good"); err != nil {
				t.Fatalf("GET %d: %v", i+1, err)
			}
		}
		if broken.get.Load() == before {
			t.Error("no GET reached the broken member: the test tried nothing")
		}
	})
	t.Run("POST not sent again", func(t *testing.T) {
		goodBefore, brokenBefore := good.post.Load(), broken.post.Load()
		failed := 0
		for i := range 20 {
			a, err := postItem(client, retried)
			switch {
			case err != nil:
				t.Fatalf("POST %d: %v", i+1, err)
			case a.status == http.StatusBadGateway && a.backend == "":
				failed++
			case a.status != http.StatusOK || a.backend != "good":
				t.Fatalf("POST %d: %s, want 200 from good or 502 from ramjetd", i+1, a)
			}
		}
		reachedGood, reachedBroken := good.post.Load()-goodBefore, broken.post.Load()-brokenBefore
		if failed == 0 || reachedBroken != int64(failed) || reachedGood+reachedBroken != 20 {
			t.Errorf("20 POSTs: %d answered 502; the good member got %d, the broken one %d; want every one that reached the broken member answered 502, and each POST sent once",
				failed, reachedGood, reachedBroken)
		}
	})
	t.Run("GET with one try", func(t *testing.T) {
		before := broken.get.Load()
		failed := 0
		for i := range 20 {
			a, err := get(t.Context(), client, once)
			switch {
			case err != nil:
				t.Fatalf("GET %d: %v", i+1, err)
			case a.status == http.StatusBadGateway && a.backend == "":
				failed++
			case a.status != http.StatusOK || a.backend != "good":
				t.Fatalf("GET %d: %s, want 200 from good or 502 from ramjetd", i+1, a)
			}
		}
		if reached := broken.get.Load() - before; failed == 0 || int64(failed) != reached {
			t.Errorf("20 GETs with one try: %d answered 502, %d reached the broken member; want them equal, and not 0", failed, reached)
		}
	})
}

// TestProxyNextUpstreamStatus: a Service of a member answering 503 and a
// good one. proxy-next-upstream: "error timeout http_503" tries the GETs
// that got 503 again, on the good member; "error timeout" passes the 503
// on; without any proxy-next-upstream key ramjetd tries 502, 503 and 504
// again (its documented default, where ingress-nginx passes them on).
func TestProxyNextUpstreamStatus(t *testing.T) {
	e := newEnv(t)
	unavailable := &counting{handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Backend", "unavailable")
		w.WriteHeader(http.StatusServiceUnavailable)
	})}
	e.service("pair", e.network.Backend(t, "good", nameHandler("good")), e.network.Backend(t, "unavailable", unavailable))
	r := e.startRamjet()
	client := r.Client(nil)
	for name, value := range map[string]string{"listed": "error timeout http_503", "unlisted": "error timeout", "default": ""} {
		var annotations map[string]string
		if value != "" {
			annotations = map[string]string{nextUpstream: value}
		}
		e.create(e.ingress(name, e.host(name), "pair", annotations))
		expect(t, client, "http://"+e.host(name)+"/", "good")
	}
	for _, tc := range []struct {
		name     string
		passedOn bool // some 503s reach the client
	}{{"listed", false}, {"unlisted", true}, {"default", false}} {
		t.Run(tc.name, func(t *testing.T) {
			before := unavailable.get.Load()
			passed := 0
			for i := range 20 {
				a, err := get(t.Context(), client, "http://"+e.host(tc.name)+"/")
				switch {
				case err != nil:
					t.Fatal(err)
				case a.status == http.StatusServiceUnavailable && a.backend == "unavailable":
					passed++
				case a.status != http.StatusOK || a.backend != "good":
					t.Fatalf("GET %d: %s, want 200 from good or the member's 503", i+1, a)
				}
			}
			reached := unavailable.get.Load() - before
			if reached == 0 {
				t.Fatal("no GET reached the member answering 503: the test tried nothing")
			}
			if tc.passedOn && int64(passed) != reached {
				t.Errorf("%d of the %d GETs that got 503 passed it on, want all", passed, reached)
			}
			if !tc.passedOn && passed != 0 {
				t.Errorf("%d GETs got the member's 503, want them tried again", passed)
			}
		})
	}
}

// postItem sends POST url with a small form body through client.
func postItem(client *http.Client, url string) (answer, error) {
	resp, err := client.Post(url, "application/x-www-form-urlencoded", strings.NewReader("item=7"))
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, backend: resp.Header.Get("X-Backend"), body: string(body), header: resp.Header, response: resp}, err
}

// counting counts the GET and POST requests that reach handler.
type counting struct {
	get, post atomic.Int64
	handler   http.Handler
}

func (c *counting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		c.get.Add(1)
	case http.MethodPost:
		c.post.Add(1)
	}
	c.handler.ServeHTTP(w, r)
}

// closer reads the request and closes the connection without an answer.
type closer struct{}

func (closer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	conn.Close()
}

// nameHandler answers X-Backend: name, as the harness's default backend.
func nameHandler(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Backend", name)
		_, _ = io.WriteString(w, name+"\n")
	})
}

// TestProxySendTimeout: an Ingress with proxy-send-timeout: "1" whose path
// / goes to a member that accepts connections and never reads them. A
// 64 MiB upload stalls once the member's buffers are full, and the client
// gets 504 within seconds (proxy-read-timeout, 60 s by default, is not
// what ends it). The Ingress's /ping, to an answering member, shows it is
// served.
func TestProxySendTimeout(t *testing.T) {
	e := newEnv(t)
	sink := startSink(t, e.network)
	e.servicePort("sink", harness.BackendPort, sink.String())
	e.service("web", e.backend("web"))
	r := e.startRamjet()
	ing := e.ingress("upload", e.host("upload"), "sink", map[string]string{
		"nginx.ingress.kubernetes.io/proxy-send-timeout": "1",
		"nginx.ingress.kubernetes.io/proxy-body-size":    "100m",
	})
	ing.Spec.Rules[0].HTTP.Paths = append(ing.Spec.Rules[0].HTTP.Paths, *pathTo("/ping", "web"))
	e.create(ing)
	expect(t, r.Client(nil), "http://"+e.host("upload")+"/ping", "web")

	start := time.Now()
	resp, err := upload(r.HTTP, e.host("upload"), 64<<20, 15*time.Second)
	if err != nil {
		t.Fatalf("POST of 64 MiB to a member that does not read: %v after %s", err, time.Since(start).Round(time.Millisecond))
	}
	t.Logf("answered %d after %s", resp.StatusCode, time.Since(start).Round(time.Millisecond))
	if resp.StatusCode != http.StatusGatewayTimeout || resp.Header.Get("X-Backend") != "" {
		t.Errorf("POST of 64 MiB to a member that does not read: %d from %q, want 504 from ramjetd", resp.StatusCode, resp.Header.Get("X-Backend"))
	}
}

// pathTo is a Prefix path sending to port 80 of service.
func pathTo(path, service string) *networkingv1.HTTPIngressPath {
	return &networkingv1.HTTPIngressPath{
		Path: path, PathType: new(networkingv1.PathTypePrefix),
		Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
			Name: service, Port: networkingv1.ServiceBackendPort{Number: 80},
		}},
	}
}

// startSink listens on a new address of n, port BackendPort, accepting
// connections and never reading them, until the test ends.
func startSink(t *testing.T, n *harness.Network) netip.Addr {
	t.Helper()
	addr, err := n.AddAddr()
	if err != nil {
		t.Fatal(err)
	}
	l, err := n.Listen(netip.AddrPortFrom(addr, uint16(harness.BackendPort)))
	if err != nil {
		t.Fatal(err)
	}
	var conns harness.ConnSet
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if !conns.Track(c) {
				c.Close()
			}
		}
	})
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
		conns.CloseAll()
	})
	return addr
}

// upload sends POST / with a body of size bytes to the plain-HTTP
// listener addr for host, writing the body from a goroutine, and returns
// the answer read meanwhile, within timeout.
func upload(addr, host string, size int, timeout time.Duration) (*http.Response, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	if _, err := fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nContent-Type: application/octet-stream\r\n\r\n", host, size); err != nil {
		return nil, err
	}
	go func() {
		chunk := make([]byte, 64<<10)
		for sent := 0; sent < size; sent += len(chunk) {
			if _, err := conn.Write(chunk); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	return resp, nil
}

// TestProxyBuffering: a member that sends the head and a first part of
// its answer, then the rest only later. Through an Ingress without
// proxy-buffering the client gets the head while the member still holds
// the rest (the member finishes only once the client has the head); with
// proxy-buffering: "on" the head comes only after the member finished, and
// the whole answer with it.
func TestProxyBuffering(t *testing.T) {
	e := newEnv(t)
	m := &slowAnswer{flushed: make(chan chan struct{}, 1)}
	e.service("slow", e.network.Backend(t, "slow", m))
	r := e.startRamjet()
	client := r.Client(nil)
	e.create(e.ingress("streamed", e.host("streamed"), "slow", nil))
	e.create(e.ingress("buffered", e.host("buffered"), "slow", map[string]string{"nginx.ingress.kubernetes.io/proxy-buffering": "on"}))
	for _, name := range []string{"streamed", "buffered"} {
		expect(t, client, "http://"+e.host(name)+"/", "slow")
	}

	t.Run("streamed", func(t *testing.T) {
		heads := make(chan error, 1)
		go func() {
			resp, err := client.Get("http://" + e.host("streamed") + "/slow")
			if err == nil {
				resp.Body.Close()
			}
			heads <- err
		}()
		release := m.next(t)
		select {
		case err := <-heads:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(wait):
			t.Fatal("the head did not come while the member held the rest of its answer")
		}
		close(release)
	})
	t.Run("buffered", func(t *testing.T) {
		type result struct {
			at   time.Time
			body string
			err  error
		}
		heads := make(chan result, 1)
		go func() {
			resp, err := client.Get("http://" + e.host("buffered") + "/slow")
			if err != nil {
				heads <- result{err: err}
				return
			}
			at := time.Now()
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			heads <- result{at, string(body), err}
		}()
		release := m.next(t)
		// The window in which a streamed head would come: not an assertion
		// on time, the order of the two events is.
		time.Sleep(300 * time.Millisecond)
		released := time.Now()
		close(release)
		got := <-heads
		switch {
		case got.err != nil:
			t.Fatal(got.err)
		case got.at.Before(released):
			t.Errorf("the head came %s before the member finished its answer", released.Sub(got.at))
		case got.body != "first\nrest\n":
			t.Errorf("body %q, want the member's whole answer", got.body)
		}
	})
}

// slowAnswer is a member answering X-Backend: slow. For /slow it sends the
// head and "first\n", then gives next a channel and sends "rest\n" once
// that channel is closed.
type slowAnswer struct{ flushed chan chan struct{} }

func (s *slowAnswer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Backend", "slow")
	if r.URL.Path != "/slow" {
		return
	}
	_, _ = io.WriteString(w, "first\n")
	_ = http.NewResponseController(w).Flush()
	release := make(chan struct{})
	s.flushed <- release
	select {
	case <-release:
	case <-time.After(wait):
	}
	_, _ = io.WriteString(w, "rest\n")
}

// next waits until the member sent the first part of an answer and returns
// the channel that lets it finish.
func (s *slowAnswer) next(t *testing.T) chan struct{} {
	t.Helper()
	select {
	case release := <-s.flushed:
		return release
	case <-time.After(wait):
		t.Fatal("the member got no request for /slow")
		return nil
	}
}

// TestProxyRewrites: a member answering a redirect to its own internal
// name, a Refresh to it and a cookie for its domain and path. With
// proxy-redirect-from/-to, proxy-cookie-domain and proxy-cookie-path, the
// client sees the public name, domain and path instead, with prefixes or
// regular expressions; without them, the member's values. An invalid
// value (proxy-cookie-domain without its TO) is ignored with an
// InvalidAnnotation Event, the object's other keys served. A member head
// larger than proxy-buffer-size answers 502.
func TestProxyRewrites(t *testing.T) {
	e := newEnv(t)
	e.service("app", e.network.Backend(t, "app", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Backend", "app")
		if r.URL.Path == "/big" {
			w.Header().Set("X-Padding", strings.Repeat("p", 2048))
			return
		}
		w.Header().Set("Location", "http://members.internal/login?next=/x")
		w.Header().Set("Refresh", "5; url=http://members.internal/later")
		w.Header().Add("Set-Cookie", "sid=1; Domain=members.internal; Path=/two/app")
		w.WriteHeader(http.StatusFound)
	})))
	r := e.startRamjet()
	client := r.Client(nil)
	const p = "nginx.ingress.kubernetes.io/"
	e.create(e.ingress("prefix", e.host("prefix"), "app", map[string]string{
		p + "proxy-redirect-from": "http://members.internal/", p + "proxy-redirect-to": "https://shop.example/",
		p + "proxy-cookie-domain": "members.internal shop.example", p + "proxy-cookie-path": "/two/ /",
		p + "proxy-buffer-size": "1k",
	}))
	e.create(e.ingress("regex", e.host("regex"), "app", map[string]string{
		p + "proxy-redirect-from": "~^http://[^/]+/(.*)$", p + "proxy-redirect-to": "/$1",
		p + "proxy-cookie-domain": "~^members\\.(.*)$ $1.example", p + "proxy-cookie-path": "~^/two/(.*)$ /$1",
	}))
	e.create(e.ingress("invalid", e.host("invalid"), "app", map[string]string{
		p + "proxy-redirect-from": "http://members.internal/", p + "proxy-redirect-to": "/",
		p + "proxy-cookie-domain": "members.internal", // TO is missing
	}))
	e.create(e.ingress("plain", e.host("plain"), "app", nil))

	for _, tc := range []struct {
		name, location, refresh, domain, path string
	}{
		{"prefix", "https://shop.example/login?next=/x", "5; url=https://shop.example/later", "shop.example", "/app"},
		{"regex", "/login?next=/x", "5; url=/later", "internal.example", "/app"},
		{"plain", "http://members.internal/login?next=/x", "5; url=http://members.internal/later", "members.internal", "/two/app"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := "http://" + e.host(tc.name) + "/"
			var a answer
			eventually(t, wait, "the Ingress is served", func() error {
				var err error
				a, err = get(t.Context(), client, url)
				if err == nil && (a.status != http.StatusFound || a.backend != "app") {
					err = fmt.Errorf("got %s, want 302 from app", a)
				}
				return err
			})
			if got := a.header.Get("Location"); got != tc.location {
				t.Errorf("Location %q, want %q", got, tc.location)
			}
			if got := a.header.Get("Refresh"); got != tc.refresh {
				t.Errorf("Refresh %q, want %q", got, tc.refresh)
			}
			cookies := a.response.Cookies()
			if len(cookies) != 1 || cookies[0].Domain != tc.domain || cookies[0].Path != tc.path {
				t.Errorf("Set-Cookie %q, want Domain %q and Path %q", a.header.Values("Set-Cookie"), tc.domain, tc.path)
			}
		})
	}
	t.Run("an invalid value", func(t *testing.T) {
		ev := e.waitEvent("invalid", "InvalidAnnotation")
		if !strings.Contains(ev.Note, "proxy-cookie-domain") {
			t.Errorf("the Event says %q, want it to name proxy-cookie-domain", ev.Note)
		}
		eventually(t, wait, "the Ingress with the invalid key is served with its other keys", func() error {
			a, err := get(t.Context(), client, "http://"+e.host("invalid")+"/")
			if err == nil && (a.status != http.StatusFound || a.header.Get("Location") != "/login?next=/x") {
				err = fmt.Errorf("got %s, Location %q; want 302 to /login?next=/x", a, a.header.Get("Location"))
			}
			return err
		})
	})
	t.Run("proxy-buffer-size", func(t *testing.T) {
		for _, tc := range []struct {
			host   string
			status int
		}{{"prefix", http.StatusBadGateway}, {"plain", http.StatusOK}} {
			a, err := get(t.Context(), client, "http://"+e.host(tc.host)+"/big")
			if err != nil || a.status != tc.status {
				t.Errorf("%s: a 2 KiB head: %s (%v), want %d", tc.host, a, err, tc.status)
			}
		}
	})
}

// TestProxyRequestBuffering: a POST of 100 KiB sent chunked (its length
// unknown). With proxy-request-buffering: "on" the member gets it whole,
// with a Content-Length; without the key ramjetd streams it, chunked, as
// it arrives. The member gets every byte either way.
func TestProxyRequestBuffering(t *testing.T) {
	e := newEnv(t)
	e.service("echo", e.network.Backend(t, "echo", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		w.Header().Set("X-Backend", "echo")
		w.Header().Set("X-Seen-Length", fmt.Sprint(r.ContentLength))
		w.Header().Set("X-Seen-Encoding", strings.Join(r.TransferEncoding, ","))
		w.Header().Set("X-Seen-Bytes", fmt.Sprint(n))
	})))
	r := e.startRamjet()
	client := r.Client(nil)
	e.create(e.ingress("buffered", e.host("buffered"), "echo", map[string]string{"nginx.ingress.kubernetes.io/proxy-request-buffering": "on"}))
	e.create(e.ingress("streamed", e.host("streamed"), "echo", nil))
	const size = 100 << 10
	for _, tc := range []struct {
		name, length, encoding string
	}{{"buffered", fmt.Sprint(size), ""}, {"streamed", "-1", "chunked"}} {
		t.Run(tc.name, func(t *testing.T) {
			url := "http://" + e.host(tc.name) + "/upload"
			expect(t, client, url, "echo")
			// A reader of unknown length makes the client send it chunked.
			body := io.MultiReader(strings.NewReader(strings.Repeat("b", size/2)), strings.NewReader(strings.Repeat("b", size/2)))
			resp, err := client.Post(url, "application/octet-stream", body)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			h := resp.Header
			if resp.StatusCode != http.StatusOK || h.Get("X-Seen-Bytes") != fmt.Sprint(size) {
				t.Fatalf("%d, the member read %s bytes; want 200 and %d", resp.StatusCode, h.Get("X-Seen-Bytes"), size)
			}
			if h.Get("X-Seen-Length") != tc.length || h.Get("X-Seen-Encoding") != tc.encoding {
				t.Errorf("the member saw Content-Length %s and Transfer-Encoding %q, want %s and %q",
					h.Get("X-Seen-Length"), h.Get("X-Seen-Encoding"), tc.length, tc.encoding)
			}
		})
	}
}

// TestProxyNextUpstreamTimeout: a member that answers 503 after 700 ms,
// and a good one; proxy-next-upstream: "error timeout http_503". With
// proxy-next-upstream-timeout: "300ms" no retry starts after the slow
// try, so its 503 is passed on; without it the request is tried again on
// the good member.
func TestProxyNextUpstreamTimeout(t *testing.T) {
	e := newEnv(t)
	slow := &counting{handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(700 * time.Millisecond):
		case <-r.Context().Done():
		}
		w.Header().Set("X-Backend", "slow")
		w.WriteHeader(http.StatusServiceUnavailable)
	})}
	e.service("pair", e.network.Backend(t, "good", nameHandler("good")), e.network.Backend(t, "slow", slow))
	r := e.startRamjet()
	client := r.Client(nil)
	e.create(e.ingress("bounded", e.host("bounded"), "pair", map[string]string{nextUpstream: "error timeout http_503", "nginx.ingress.kubernetes.io/proxy-next-upstream-timeout": "300ms"}))
	e.create(e.ingress("unbounded", e.host("unbounded"), "pair", map[string]string{nextUpstream: "error timeout http_503"}))
	for _, tc := range []struct {
		name     string
		passedOn bool
	}{{"bounded", true}, {"unbounded", false}} {
		t.Run(tc.name, func(t *testing.T) {
			url := "http://" + e.host(tc.name) + "/"
			expect(t, client, url, "good")
			before := slow.get.Load()
			passed := 0
			for i := range 6 {
				a, err := get(t.Context(), client, url)
				switch {
				case err != nil:
					t.Fatal(err)
				case a.status == http.StatusServiceUnavailable && a.backend == "slow":
					passed++
				case a.status != http.StatusOK || a.backend != "good":
					t.Fatalf("GET %d: %s, want 200 from good or the slow member's 503", i+1, a)
				}
			}
			reached := slow.get.Load() - before
			switch {
			case reached == 0:
				t.Fatal("no GET reached the slow member: the test tried nothing")
			case tc.passedOn && int64(passed) != reached:
				t.Errorf("%d of the %d GETs that reached the slow member passed its 503 on, want all", passed, reached)
			case !tc.passedOn && passed != 0:
				t.Errorf("%d GETs got the slow member's 503, want them tried again", passed)
			}
		})
	}
}
