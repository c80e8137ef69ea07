package daemon

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/admin"
)

// listenersConfig serves one application on the listeners of .Listeners
// (name to testListener); /slow goes to the pool of .Slow, the rest is
// answered "v<Version>".
const listenersConfig = `
server:
  listeners:
{{range $name, $l := .Listeners}}    {{$name}}: {address: "{{$l.Addr}}"{{if $l.TLS}}, tls: {}{{end}}{{if $l.H2C}}, h2c: true{{end}}}
{{end}}  health: {address: "127.0.0.1:0"}
  admin: {socket: "{{.Dir}}/admin.sock"}
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /slow}}
            action: {pool: slow}
          - match: {path: {prefix: /}}
            action: {respond: {status: 200, body: "v{{.Version}}"}}
    pools:
      slow: {members: ["{{.Slow}}"]}
`

type testListener struct {
	Addr string
	TLS  bool
	H2C  bool
}

// freeAddress is a loopback address nothing listens on, with a port below
// Linux's ephemeral range (32768 and up): a port the system handed out
// for port 0 could be handed out again to another test binary before
// the test binds it.
func freeAddress(t *testing.T) string {
	t.Helper()
	for range 100 {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(22000+rand.IntN(10000)))
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			return addr
		}
	}
	t.Fatal("no free loopback port below the ephemeral range")
	return ""
}

// TestH2CListener: a listener with h2c serves HTTP/2 with prior knowledge
// and HTTP/1.1 on one port, a listener without it HTTP/1.1 only (net/http
// answers the preface as a bad HTTP/1 request), and turning h2c on by a
// reload takes effect.
func TestH2CListener(t *testing.T) {
	slow := startBackend(t, echo("slow"))
	plain := freeAddress(t)
	start := map[string]testListener{"h2c": {Addr: "127.0.0.1:0", H2C: true}, "plain": {Addr: plain}}
	td := startDaemon(t, listenersConfig, map[string]any{"Listeners": start, "Slow": slow.addr, "Version": 0})
	if got, err := h2cGet(td.bound.get("h2c")); err != nil || got != "HTTP/2.0 200 v0" {
		t.Errorf("h2c request to the h2c listener: %q, %v; want HTTP/2.0 200 v0", got, err)
	}
	if body := answerOf(t, td, "h2c"); body != "v0" {
		t.Errorf("HTTP/1.1 request to the h2c listener: %q, want v0", body)
	}
	if got, err := h2cGet(td.bound.get("plain")); err == nil {
		t.Errorf("h2c request to a listener without h2c answered %q", got)
	}

	td.write(t, listenersConfig, map[string]any{"Listeners": map[string]testListener{"h2c": start["h2c"], "plain": {Addr: plain, H2C: true}}, "Slow": slow.addr, "Version": 1})
	if _, err := td.admin.Reload(context.Background()); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if got, err := h2cGet(td.bound.get("plain")); err != nil || got != "HTTP/2.0 200 v1" {
		t.Errorf("h2c request once h2c is on: %q, %v; want HTTP/2.0 200 v1", got, err)
	}
}

// h2cGet sends GET http://app.test/ to addr over HTTP/2 with prior
// knowledge and returns "PROTO STATUS BODY".
func h2cGet(addr string) (string, error) {
	protocols := new(http.Protocols)
	protocols.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: protocols, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	resp, err := client.Get("http://app.test/")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.Proto + " " + strconv.Itoa(resp.StatusCode) + " " + string(body), err
}

// TestListenersChangeOnReload adds, removes and changes listeners by
// reloading, and checks after each step that every listener of the file
// answers, that those gone refuse connections, and that a keep-alive
// connection of a listener that stays is never dropped.
func TestListenersChangeOnReload(t *testing.T) {
	slow := startBackend(t, echo("slow"))
	fixed, swapped := freeAddress(t), freeAddress(t)
	busy := busyAddress(t)
	start := map[string]testListener{"http": {Addr: "127.0.0.1:0"}, "https": {Addr: "127.0.0.1:0", TLS: true}}
	td := startDaemon(t, listenersConfig, map[string]any{"Listeners": start, "Slow": slow.addr, "Version": 0})
	kept := keptConn(t, td.bound.get("https"), true)

	steps := []struct {
		name      string
		listeners map[string]testListener
		// refused is the problem a refused reload reports; empty when the
		// reload must succeed.
		refused string
		// gone are listeners (by name, before the step) whose address
		// must refuse connections after it.
		gone []string
		// same are listeners whose address must stay as before.
		same []string
	}{
		{name: "add a listener", listeners: map[string]testListener{"http": start["http"], "https": start["https"], "extra": {Addr: fixed}}, same: []string{"http", "https"}},
		{name: "remove a listener", listeners: start, gone: []string{"extra"}, same: []string{"http", "https"}},
		{name: "change an address", listeners: map[string]testListener{"http": {Addr: fixed}, "https": start["https"]}, gone: []string{"http"}, same: []string{"https"}},
		{name: "turn TLS on at the same address", listeners: map[string]testListener{"http": {Addr: fixed, TLS: true}, "https": start["https"]}, same: []string{"http", "https"}},
		{name: "rename a listener", listeners: map[string]testListener{"secure": {Addr: fixed, TLS: true}, "https": start["https"]}, same: []string{"https"}},
		{name: "two listeners swap addresses", listeners: map[string]testListener{"secure": {Addr: swapped}, "plain": {Addr: fixed}, "https": start["https"]}, same: []string{"https"}},
		{name: "swap back", listeners: map[string]testListener{"secure": {Addr: fixed}, "plain": {Addr: swapped}, "https": start["https"]}, same: []string{"https"}},
		{name: "an address in use refuses the reload", listeners: map[string]testListener{"secure": {Addr: fixed}, "plain": {Addr: swapped}, "https": start["https"], "extra": {Addr: busy}},
			refused: "server.listeners.extra.address: cannot listen on " + busy + ": address already in use", same: []string{"secure", "plain", "https"}},
		{name: "an address of no interface refuses the reload", listeners: map[string]testListener{"secure": {Addr: fixed}, "plain": {Addr: swapped}, "https": start["https"], "extra": {Addr: "192.0.2.1:8080"}},
			refused: "server.listeners.extra.address: cannot listen on 192.0.2.1:8080: cannot assign requested address", same: []string{"secure", "plain", "https"}},
	}
	served := 0 // the version of the serving file
	for i, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			before := td.bound.all()
			generation := td.current.Load().number
			td.write(t, listenersConfig, map[string]any{"Listeners": step.listeners, "Slow": slow.addr, "Version": i + 1})
			_, err := td.admin.Reload(context.Background())
			if step.refused == "" {
				served = i + 1
			}
			want := served
			if step.refused != "" {
				var refused *admin.ConfigError
				if !errors.As(err, &refused) || !strings.Contains(strings.Join(refused.Problems, "\n"), step.refused) {
					t.Fatalf("reload: %v, want a refusal with %q", err, step.refused)
				}
				if got := td.current.Load().number; got != generation {
					t.Errorf("generation %d after a refused reload, want %d", got, generation)
				}
			} else if err != nil {
				t.Fatalf("reload: %v", err)
			}
			for name := range step.listeners {
				if step.refused != "" && td.bound.get(name) == "" {
					continue
				}
				if body := answerOf(t, td, name); body != "v"+strconv.Itoa(want) {
					t.Errorf("listener %s answers %q, want v%d", name, body, want)
				}
			}
			for _, name := range step.same {
				if got := td.bound.get(name); got != before[name] {
					t.Errorf("listener %s moved from %s to %s", name, before[name], got)
				}
			}
			for _, name := range step.gone {
				if stillOpen(before[name], td.bound.all()) {
					continue
				}
				if c, err := net.DialTimeout("tcp", before[name], time.Second); err == nil {
					c.Close()
					t.Errorf("the address %s of listener %s still accepts connections", before[name], name)
				}
			}
			if got := kept.get(t); got != "v"+strconv.Itoa(want) {
				t.Errorf("the kept connection of listener https answers %q, want v%d", got, want)
			}
			if step.refused != "" {
				if _, ok := td.bound.all()["extra"]; ok {
					t.Error("a refused listener is listed as bound")
				}
			}
		})
	}
}

// stillOpen reports whether another listener now holds addr.
func stillOpen(addr string, bound map[string]string) bool {
	for _, a := range bound {
		if a == addr {
			return true
		}
	}
	return false
}

// answerOf is the body of GET / for app.test on the listener name.
func answerOf(t *testing.T, td *testDaemon, name string) string {
	t.Helper()
	status, body, _ := get(t, client(), td.url(name)+"/", "app.test")
	if status != http.StatusOK {
		t.Errorf("listener %s: status %d %q", name, status, body)
	}
	return body
}

// conn is one client connection that sends requests one after another.
type conn struct {
	c  net.Conn
	br *bufio.Reader
}

// keptConn opens a connection to addr (over TLS when tls) that the test
// keeps alive across reloads.
func keptConn(t *testing.T, addr string, useTLS bool) *conn {
	t.Helper()
	tr := client().Transport.(*http.Transport)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if useTLS {
		cfg := tr.TLSClientConfig.Clone()
		cfg.NextProtos = []string{"http/1.1"}
		tc := tls.Client(c, cfg)
		if err := tc.Handshake(); err != nil {
			t.Fatal(err)
		}
		c = tc
	}
	t.Cleanup(func() { c.Close() })
	return &conn{c: c, br: bufio.NewReader(c)}
}

// get sends GET / for app.test and returns the body.
func (k *conn) get(t *testing.T) string {
	t.Helper()
	k.c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(k.c, "GET / HTTP/1.1\r\nHost: app.test\r\n\r\n"); err != nil {
		t.Fatalf("writing on the kept connection: %v", err)
	}
	resp, err := http.ReadResponse(k.br, nil)
	if err != nil {
		t.Fatalf("reading on the kept connection: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

// TestRemovedListenerFinishesInFlight removes a listener while it serves
// two requests: its address refuses connections at once, the request that
// ends within the shutdown timeout (2s here) gets its answer, and the one
// that does not has its connection closed then.
func TestRemovedListenerFinishesInFlight(t *testing.T) {
	arrived, release := make(chan string, 2), make(chan struct{})
	slow := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		arrived <- r.URL.Path
		if r.URL.Path != "/slow/finishes" {
			<-r.Context().Done()
			return
		}
		select {
		case <-release:
			io.WriteString(w, "finished")
		case <-r.Context().Done():
		}
	})
	defer close(release)
	both := map[string]testListener{"http": {Addr: "127.0.0.1:0"}, "extra": {Addr: "127.0.0.1:0"}}
	td := startDaemon(t, listenersConfig, map[string]any{"Listeners": both, "Slow": slow.addr, "Version": 0})
	extra := td.bound.get("extra")

	type result struct {
		body string
		err  error
		took time.Duration
	}
	send := func(path string) <-chan result {
		out := make(chan result, 1)
		go func() {
			start := time.Now()
			c := &http.Client{Timeout: 20 * time.Second}
			req, _ := http.NewRequest(http.MethodGet, "http://"+extra+path, nil)
			req.Host = "app.test"
			resp, err := c.Do(req)
			var body []byte
			if err == nil {
				body, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			out <- result{string(body), err, time.Since(start)}
		}()
		return out
	}
	finishes, hangs := send("/slow/finishes"), send("/slow/hangs")
	<-arrived
	<-arrived

	td.write(t, listenersConfig, map[string]any{"Listeners": map[string]testListener{"http": both["http"]}, "Slow": slow.addr, "Version": 1})
	td.reload(t)
	if c, err := net.DialTimeout("tcp", extra, time.Second); err == nil {
		c.Close()
		t.Error("the removed listener still accepts connections")
	}
	if body := answerOf(t, td, "http"); body != "v1" {
		t.Errorf("the listener that stays answers %q, want v1", body)
	}
	release <- struct{}{}
	if r := <-finishes; r.err != nil || r.body != "finished" {
		t.Errorf("the request that finishes: %q, %v; want its answer", r.body, r.err)
	}
	r := <-hangs
	if r.err == nil {
		t.Errorf("the request that hangs got %q, want its connection closed", r.body)
	}
	if r.took > 10*time.Second {
		t.Errorf("the hanging request ended after %v, want about the 2s shutdown timeout", r.took)
	}
	// The removed listener's servers are forgotten right after they close.
	for wait := time.Now().Add(2 * time.Second); len(td.serversNow()) != 1 && time.Now().Before(wait); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(td.serversNow()); n != 1 {
		t.Errorf("%d servers left, want only the http listener's", n)
	}
}

// scopedConfig has two TLS listeners, each with its own application for
// shared.test and its own certificate for it, and a plain listener with
// neither.
const scopedConfig = `
server:
  listeners:
    gw-a: {address: "127.0.0.1:0", tls: {}}
    gw-b: {address: "127.0.0.1:0", tls: {}}
    http: {address: "127.0.0.1:0"}
  health: {address: "127.0.0.1:0"}
  admin: {socket: "{{.Dir}}/admin.sock"}
tenants:
  t:
    applications:
      a:
        domains: [shared.test, only-a.test]
        listeners: [gw-a]
        tls: {cert_file: "{{.CertA}}", key_file: "{{.KeyA}}"}
        default_route: {action: {respond: {status: 200, body: "a"}}}
      b:
        domains: [shared.test]
        listeners: [gw-b]
        tls: {cert_file: "{{.CertB}}", key_file: "{{.KeyB}}"}
        default_route: {action: {respond: {status: 200, body: "b"}}}
      everywhere:
        domains: [every.test]
        default_route: {action: {respond: {status: 200, body: "every"}}}
`

// TestApplicationsScopedToListeners serves one domain from two
// applications on two listeners: each listener routes its requests, and
// chooses the certificate by SNI, among its own applications only.
func TestApplicationsScopedToListeners(t *testing.T) {
	caA, caB := newCA(t, "CA of a"), newCA(t, "CA of b")
	dir := t.TempDir()
	certA, keyA := caA.issue(t, "shared.test", "only-a.test")
	certB, keyB := caB.issue(t, "shared.test")
	td := startDaemon(t, scopedConfig, map[string]any{
		"CertA": writeFile(t, dir, "a.crt", certA), "KeyA": writeFile(t, dir, "a.key", keyA),
		"CertB": writeFile(t, dir, "b.crt", certB), "KeyB": writeFile(t, dir, "b.key", keyB),
	})
	const unknown = "Not Found: no application serves this host\n"
	cases := []struct {
		listener, host string
		status         int
		body           string
		// issuer is the issuer of the certificate served for host by SNI.
		issuer string
	}{
		{"gw-a", "shared.test", 200, "a", "CA of a"},
		{"gw-b", "shared.test", 200, "b", "CA of b"},
		{"http", "shared.test", 404, unknown, ""},
		{"gw-a", "only-a.test", 200, "a", "CA of a"},
		{"gw-b", "only-a.test", 404, unknown, "Ramjet Ingress Controller Fake Certificate"},
		{"http", "every.test", 200, "every", ""},
		{"gw-b", "every.test", 200, "every", "Ramjet Ingress Controller Fake Certificate"},
	}
	for _, tc := range cases {
		t.Run(tc.listener+" "+tc.host, func(t *testing.T) {
			status, body, _ := get(t, client(), td.url(tc.listener)+"/", tc.host)
			if status != tc.status || body != tc.body {
				t.Errorf("got %d %q, want %d %q", status, body, tc.status, tc.body)
			}
			if tc.issuer == "" {
				return
			}
			conn, err := tls.Dial("tcp", td.bound.get(tc.listener), &tls.Config{ServerName: tc.host, InsecureSkipVerify: true})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if got := conn.ConnectionState().PeerCertificates[0].Issuer.CommonName; got != tc.issuer {
				t.Errorf("SNI %s: certificate issued by %q, want %q", tc.host, got, tc.issuer)
			}
		})
	}
}

// TestListenerChangesUnderLoad adds and removes a listener, and turns
// another's TLS on and off, 50 times while clients send requests without pause to the
// listener that stays: none of them may fail.
func TestListenerChangesUnderLoad(t *testing.T) {
	slow := startBackend(t, echo("slow"))
	stays := testListener{Addr: "127.0.0.1:0", TLS: true}
	td := startDaemon(t, listenersConfig, map[string]any{"Listeners": map[string]testListener{"https": stays}, "Slow": slow.addr, "Version": 0})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	failures := make(chan string, 4)
	done := make(chan int, 4)
	for range 4 {
		go func() {
			c, sent := client(), 0
			for ctx.Err() == nil {
				req, _ := http.NewRequest(http.MethodGet, td.url("https")+"/", nil)
				req.Host = "app.test"
				resp, err := c.Do(req)
				if err != nil {
					failures <- err.Error()
					break
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failures <- resp.Status
					break
				}
				sent++
			}
			done <- sent
		}()
	}
	for i := 1; i <= 50; i++ {
		listeners := map[string]testListener{"https": stays, "moving": {Addr: "127.0.0.1:0", TLS: i%2 == 0}}
		if i%3 == 0 {
			listeners["extra"] = testListener{Addr: "127.0.0.1:0"}
		}
		td.write(t, listenersConfig, map[string]any{"Listeners": listeners, "Slow": slow.addr, "Version": i})
		td.reload(t)
	}
	cancel()
	total := 0
	for range 4 {
		total += <-done
	}
	select {
	case f := <-failures:
		t.Errorf("a request to the listener that stays failed: %s", f)
	default:
	}
	t.Logf("%d requests during 50 reloads that changed listeners", total)
}
