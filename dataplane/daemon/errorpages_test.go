package daemon

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// errorPagesConfig has a route of pool app (members .App, empty for
// none) whose answers .Statuses go to pool errors (members .Errors), and a
// fallback pool fb (member .Fallback) when .UseFallback is set.
const errorPagesConfig = baseConfig + `
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /}}
            action: {pool: app}
            policies:
              error_pages:
                statuses: [{{.Statuses}}]
                pool: errors
                own_answers_only: {{.OwnOnly}}
                timeout: 2s
{{- if .UseFallback}}
                fallback_pool: fb
{{- end}}
                namespace: shop
                ingress: web
                service: front
                service_port: http
    pools:
      app: {members: [{{.App}}]}
      errors: {members: [{{.Errors}}]}
      fb: {members: [{{.Fallback}}]}
`

// errorBackend answers with the status of X-Code (200 without one) and
// echoes what it received, as ingress-nginx's custom error backends do.
func errorBackend() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		status := http.StatusOK
		if code, err := strconv.Atoi(r.Header.Get("X-Code")); err == nil {
			status = code
		}
		w.Header().Set("X-Error-Backend", "yes")
		w.WriteHeader(status)
		fmt.Fprintf(w, "page %s %s body=%d code=%s format=%s uri=%s ns=%s ing=%s svc=%s port=%s id=%t xff=%s host=%s",
			r.Method, r.URL.RequestURI(), len(body), r.Header.Get("X-Code"), r.Header.Get("X-Format"), r.Header.Get("X-Original-URI"),
			r.Header.Get("X-Namespace"), r.Header.Get("X-Ingress-Name"), r.Header.Get("X-Service-Name"), r.Header.Get("X-Service-Port"),
			r.Header.Get("X-Request-Id") != "", r.Header.Get("X-Forwarded-For"), r.Host)
	}
}

// statusBackend answers every request with status and a body naming it.
func statusBackend(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// closedAddress is a loopback address nothing listens on.
func closedAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func quoted(addrs ...string) string {
	var out []string
	for _, a := range addrs {
		out = append(out, strconv.Quote(a))
	}
	return strings.Join(out, ", ")
}

// TestErrorPages proves which answers the error backend replaces, what it
// receives, and that the client gets its status and body, or the original
// answer when it fails.
func TestErrorPages(t *testing.T) {
	const wantHeaders = "code=%d format=text/html uri=/shop/cart?x=1 ns=shop ing=web svc=front port=http id=true xff=127.0.0.1 host=app.test"
	tests := []struct {
		name        string
		member      http.HandlerFunc // nil: the pool has no members; closed: unreachable
		unreachable bool
		errorsDown  bool
		statuses    string
		ownOnly     bool
		method      string
		wantStatus  int
		wantPrefix  string
	}{
		{name: "member 404 replaced", member: statusBackend(404, "member 404"), statuses: "404, 503",
			wantStatus: 404, wantPrefix: "page GET /?x=1 body=0 " + fmt.Sprintf(wantHeaders, 404)},
		{name: "member 503 replaced", member: statusBackend(503, "member 503"), statuses: "404, 503",
			wantStatus: 503, wantPrefix: "page GET /?x=1 body=0 " + fmt.Sprintf(wantHeaders, 503)},
		{name: "POST becomes a GET without body", member: statusBackend(404, "member 404"), statuses: "404", method: http.MethodPost,
			wantStatus: 404, wantPrefix: "page GET /?x=1 body=0 code=404"},
		{name: "unlisted status passes", member: statusBackend(500, "member 500"), statuses: "404, 503",
			wantStatus: 500, wantPrefix: "member 500"},
		{name: "success passes", member: statusBackend(200, "member ok"), statuses: "404",
			wantStatus: 200, wantPrefix: "member ok"},
		{name: "own 503 without members replaced", statuses: "503",
			wantStatus: 503, wantPrefix: "page GET /?x=1 body=0 " + fmt.Sprintf(wantHeaders, 503)},
		{name: "own 502 replaced", unreachable: true, statuses: "502",
			wantStatus: 502, wantPrefix: "page GET /?x=1 body=0 code=502"},
		{name: "own answers only: member 404 passes", member: statusBackend(404, "member 404"), statuses: "404", ownOnly: true,
			wantStatus: 404, wantPrefix: "member 404"},
		{name: "own answers only: own 503 replaced", statuses: "503", ownOnly: true,
			wantStatus: 503, wantPrefix: "page GET /?x=1 body=0 code=503"},
		{name: "error backend down: the member's answer", member: statusBackend(404, "member 404"), statuses: "404", errorsDown: true,
			wantStatus: 404, wantPrefix: "member 404"},
		{name: "error backend down: the own answer", statuses: "503", errorsDown: true,
			wantStatus: 503, wantPrefix: "Service Unavailable: no backend is available for this route"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := map[string]any{"Statuses": tc.statuses, "OwnOnly": tc.ownOnly, "App": "", "Fallback": "", "UseFallback": false}
			switch {
			case tc.unreachable:
				data["App"] = quoted(closedAddress(t))
			case tc.member != nil:
				data["App"] = quoted(startBackend(t, tc.member).addr)
			}
			errs := startBackend(t, errorBackend())
			data["Errors"] = quoted(errs.addr)
			if tc.errorsDown {
				data["Errors"] = quoted(closedAddress(t))
			}
			td := startDaemon(t, errorPagesConfig, data)
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			req, _ := http.NewRequest(method, td.url("http")+"/shop/cart?x=1", strings.NewReader("client body"))
			req.Host = "app.test"
			req.Header.Set("Accept", "text/html")
			resp, err := client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus || !strings.HasPrefix(string(body), tc.wantPrefix) {
				t.Errorf("got %d %q, want %d %q...", resp.StatusCode, body, tc.wantStatus, tc.wantPrefix)
			}
		})
	}
}

// TestErrorPageStatusIsTheBackends proves that the client gets the error
// backend's status, not the original one (nginx's error_page with "="
// and no code).
func TestErrorPageStatusIsTheBackends(t *testing.T) {
	member := startBackend(t, statusBackend(404, "member 404"))
	errs := startBackend(t, statusBackend(200, "custom page"))
	td := startDaemon(t, errorPagesConfig, map[string]any{"Statuses": "404", "OwnOnly": false, "App": quoted(member.addr),
		"Errors": quoted(errs.addr), "Fallback": "", "UseFallback": false})
	status, body, err := send(t, client(), td, http.MethodGet, "/", nil)
	if err != nil || status != 200 || body != "custom page" {
		t.Errorf("got %d %q %v, want 200 \"custom page\"", status, body, err)
	}
}

// TestErrorPageDiscardsLargeBody proves that a member's large error body
// is not sent, and that the request ends once the page is sent.
func TestErrorPageDiscardsLargeBody(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 8<<20)
	member := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(404)
		w.Write(big)
	})
	errs := startBackend(t, statusBackend(404, "small page"))
	td := startDaemon(t, errorPagesConfig, map[string]any{"Statuses": "404", "OwnOnly": false, "App": quoted(member.addr),
		"Errors": quoted(errs.addr), "Fallback": "", "UseFallback": false})
	c := client()
	for i := range 3 {
		status, body, err := send(t, c, td, http.MethodGet, "/", nil)
		if err != nil || status != 404 || body != "small page" {
			t.Fatalf("request %d: got %d %d bytes %v, want 404 \"small page\"", i, status, len(body), err)
		}
	}
}

// TestErrorPagesFallback proves that the fallback pool serves the route's
// requests, as they are and with the X-Code: 503 headers, while the
// route's pool has no members, and not once it has one.
func TestErrorPagesFallback(t *testing.T) {
	var got http.Header
	var gotLine string
	fb := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got, gotLine = r.Header.Clone(), fmt.Sprintf("%s %s %d", r.Method, r.URL.RequestURI(), len(body))
		io.WriteString(w, "fallback")
	})
	errs := startBackend(t, errorBackend())
	data := map[string]any{"Statuses": "404", "OwnOnly": false, "App": "", "Errors": quoted(errs.addr), "Fallback": quoted(fb.addr), "UseFallback": true}
	td := startDaemon(t, errorPagesConfig, data)
	status, body, err := send(t, client(), td, http.MethodPost, "/shop?q=2", []byte("abc"))
	if err != nil || status != 200 || body != "fallback" {
		t.Fatalf("got %d %q %v, want 200 \"fallback\"", status, body, err)
	}
	if gotLine != "POST /shop?q=2 3" {
		t.Errorf("the fallback received %q, want the request as sent: POST /shop?q=2 3", gotLine)
	}
	want := map[string]string{"X-Code": "503", "X-Namespace": "shop", "X-Ingress-Name": "web", "X-Service-Name": "front", "X-Service-Port": "http"}
	for name, value := range want {
		if got.Get(name) != value {
			t.Errorf("%s = %q, want %q", name, got.Get(name), value)
		}
	}
	if got.Get("X-Request-Id") == "" {
		t.Error("X-Request-Id is missing")
	}
	member := startBackend(t, echo("member"))
	data["App"] = quoted(member.addr)
	td.write(t, errorPagesConfig, data)
	td.reload(t)
	if status, body, _ := send(t, client(), td, http.MethodGet, "/", nil); status != 200 || !strings.HasPrefix(body, "member ") {
		t.Errorf("with a member: got %d %q, want the member's answer", status, body)
	}
}

// BenchmarkErrorPagesPassThrough measures the handler on a route with
// error pages whose member answers 200: the answers that are not
// intercepted must cost what they cost without error pages (compare
// allocs/op with BenchmarkProxy/handler).
func BenchmarkErrorPagesPassThrough(b *testing.B) {
	body := strings.Repeat("x", 1024)
	member := startBackend(b, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })
	errs := startBackend(b, statusBackend(404, "page"))
	td := startDaemon(b, errorPagesConfig, map[string]any{"Statuses": "404, 503", "OwnOnly": false, "App": quoted(member.addr),
		"Errors": quoted(errs.addr), "Fallback": quoted(errs.addr), "UseFallback": true})
	benchHandler(b, td.Daemon)
}
