package extauth

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

func TestStatusRules(t *testing.T) {
	tests := []struct {
		name         string
		answer       func(w http.ResponseWriter)
		cfg          config.ExternalAuth
		wantStatus   int
		wantMember   bool
		wantHeader   map[string][]string // on the answer to the client
		wantNoHeader []string
	}{
		{name: "200 passes", answer: status(200), wantStatus: 200, wantMember: true},
		{name: "204 passes", answer: status(204), wantStatus: 200, wantMember: true},
		{name: "2xx Set-Cookie reaches the client", answer: withHeaders(200, "Set-Cookie", "s=1"), wantStatus: 200, wantMember: true,
			wantHeader: map[string][]string{"Set-Cookie": {"s=1"}}},
		{name: "401 is returned with WWW-Authenticate", answer: withHeaders(401, "Www-Authenticate", `Bearer realm="x"`, "Set-Cookie", "s=1"), wantStatus: 401,
			wantHeader: map[string][]string{"Www-Authenticate": {`Bearer realm="x"`}}, wantNoHeader: []string{"Set-Cookie"}},
		{name: "401 with always_set_cookie sends Set-Cookie", answer: withHeaders(401, "Set-Cookie", "s=1"), cfg: config.ExternalAuth{AlwaysSetCookie: true},
			wantStatus: 401, wantHeader: map[string][]string{"Set-Cookie": {"s=1"}}},
		{name: "403 is returned", answer: withHeaders(403, "Www-Authenticate", "Basic"), wantStatus: 403,
			wantHeader: map[string][]string{"Www-Authenticate": {"Basic"}}},
		{name: "403 with always_set_cookie sends Set-Cookie", answer: withHeaders(403, "Set-Cookie", "s=2"), cfg: config.ExternalAuth{AlwaysSetCookie: true},
			wantStatus: 403, wantHeader: map[string][]string{"Set-Cookie": {"s=2"}}},
		{name: "403 with a sign-in URL stays 403", answer: status(403), cfg: config.ExternalAuth{SigninURL: "https://login.example.com/"}, wantStatus: 403},
		{name: "302 is an error", answer: withHeaders(302, "Location", "/elsewhere"), wantStatus: 500, wantNoHeader: []string{"Location"}},
		{name: "404 is an error", answer: status(404), wantStatus: 500},
		{name: "500 is an error", answer: status(500), wantStatus: 500},
		{name: "503 is an error", answer: status(503), wantStatus: 500},
		{name: "100-599 other: 400 is an error", answer: status(400), wantStatus: 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := startAuth(t, handle(tt.answer))
			cfg := tt.cfg
			cfg.URL = svc.URL + "/auth"
			h, m, _ := newHandler(t, &cfg)
			w := serve(h, newExchange(http.MethodGet, "/app", nil))
			if w.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d", w.Code, tt.wantStatus)
			}
			if got := m.calls.Load() == 1; got != tt.wantMember {
				t.Errorf("member reached = %v, want %v", got, tt.wantMember)
			}
			for name, want := range tt.wantHeader {
				if got := w.Header()[name]; !reflect.DeepEqual(got, want) {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
			for _, name := range tt.wantNoHeader {
				if got := w.Header()[name]; got != nil {
					t.Errorf("%s = %q, want none", name, got)
				}
			}
		})
	}
}

// handle makes an answer a handler.
func handle(answer func(http.ResponseWriter)) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { answer(w) }
}

func status(code int) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) { w.WriteHeader(code) }
}

// withHeaders answers code with header name/value pairs.
func withHeaders(code int, pairs ...string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i < len(pairs); i += 2 {
			w.Header().Add(pairs[i], pairs[i+1])
		}
		w.WriteHeader(code)
	}
}

func TestResponseHeadersReplaceTheClients(t *testing.T) {
	svc := startAuth(t, handle(withHeaders(200, "X-Auth-Request-User", "alice", "X-Auth-Request-Groups", "a", "X-Auth-Request-Groups", "b")))
	h, m, _ := newHandler(t, &config.ExternalAuth{
		URL:             svc.URL,
		ResponseHeaders: []string{"x-auth-request-user", "X-Auth-Request-Groups", "X-Auth-Request-Email"},
	})
	forged := http.Header{
		"X-Auth-Request-User":  {"mallory"},
		"X-Auth-Request-Email": {"mallory@example.com"},
		"X-Other":              {"kept"},
	}
	if w := serve(h, newExchange(http.MethodGet, "/", forged)); w.Code != 200 {
		t.Fatalf("status = %d, want 200", w.Code)
	}
	tests := []struct {
		name string
		want []string
	}{
		{name: "X-Auth-Request-User", want: []string{"alice"}},
		{name: "X-Auth-Request-Groups", want: []string{"a", "b"}},
		{name: "X-Auth-Request-Email", want: nil}, // the service sent none: the forged one is removed
		{name: "X-Other", want: []string{"kept"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.header[tt.name]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("member got %s = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

func TestSubrequestHeaders(t *testing.T) {
	tests := []struct {
		name       string
		cfg        config.ExternalAuth
		method     string
		header     http.Header
		wantMethod string
		want       map[string]string // "" means absent
	}{
		{
			name: "defaults", method: http.MethodPost,
			header:     http.Header{"Authorization": {"Bearer t"}, "Content-Length": {"12"}, "Connection": {"X-Hop"}, "X-Hop": {"1"}, "X-Forwarded-For": {"203.0.113.9"}, "X_Under": {"1"}},
			wantMethod: http.MethodGet,
			want: map[string]string{
				"Authorization": "Bearer t", "X-Original-Url": "http://app.test/a/b?q=1", "X-Original-Method": "POST",
				"X-Auth-Request-Redirect": "/a/b?q=1", "X-Sent-From": "nginx-ingress-controller",
				"X-Forwarded-For": "192.0.2.10", "X-Real-Ip": "192.0.2.10", "X-Forwarded-Proto": "http", "X-Forwarded-Host": "app.test", "X-Forwarded-Port": "80",
				"Content-Length": "", "X-Hop": "", "X_under": "", "X-Original-Uri": "",
			},
		},
		{
			name: "method, redirect and extra headers",
			cfg: config.ExternalAuth{Method: "POST", RequestRedirect: "https://app.test/back", ProxySetHeaders: map[string]string{
				"X-Tenant": "shop", "Authorization": "Basic c2VydmljZQ=="}},
			method: http.MethodGet, header: http.Header{"Authorization": {"Bearer t"}},
			wantMethod: http.MethodPost,
			want: map[string]string{
				"X-Auth-Request-Redirect": "https://app.test/back", "X-Tenant": "shop", "Authorization": "Basic c2VydmljZQ==",
				"X-Original-Uri": "/a/b?q=1", "X-Original-Method": "GET",
			},
		},
		{
			name: "extra headers with variables, and an empty one removing the client's",
			cfg: config.ExternalAuth{ProxySetHeaders: map[string]string{
				"X-Original-Host": "$host", "X-Where": "${scheme}://$http_host$request_uri from $remote_addr", "Authorization": ""}},
			method: http.MethodGet, header: http.Header{"Authorization": {"Bearer t"}},
			wantMethod: http.MethodGet,
			want: map[string]string{
				"X-Original-Host": "app.test", "X-Where": "http://app.test/a/b?q=1 from 192.0.2.10", "Authorization": "",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := startAuth(t, handle(status(200)))
			cfg := tt.cfg
			cfg.URL = svc.URL + "/check?x=1"
			h, _, _ := newHandler(t, &cfg)
			x := newExchange(tt.method, "/a/b?q=1", tt.header)
			x.HTTP.Body = http.NoBody
			if w := serve(h, x); w.Code != 200 {
				t.Fatalf("status = %d, want 200", w.Code)
			}
			seen := svc.seen()
			if seen.method != tt.wantMethod {
				t.Errorf("method = %s, want %s", seen.method, tt.wantMethod)
			}
			if want := strings.TrimPrefix(svc.URL, "http://"); seen.host != want {
				t.Errorf("Host = %s, want %s", seen.host, want)
			}
			if seen.bodyBytes != 0 {
				t.Errorf("body of %d bytes, want none", seen.bodyBytes)
			}
			if seen.header.Get("X-Request-Id") == "" || seen.header.Get("X-Request-Id") != x.HTTP.Header.Get("X-Request-Id") {
				t.Errorf("X-Request-Id = %q, want the request's %q", seen.header.Get("X-Request-Id"), x.HTTP.Header.Get("X-Request-Id"))
			}
			for name, want := range tt.want {
				if got := strings.Join(seen.header[name], ","); got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
		})
	}
}

func TestFailuresAnswer500(t *testing.T) {
	slowRelease := make(chan struct{})
	t.Cleanup(func() { close(slowRelease) })
	slow := startAuth(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-slowRelease:
		}
	})
	down := startAuth(t, handle(status(200)))
	down.Close()
	up := startAuth(t, handle(status(200)))
	tests := []struct {
		name     string
		cfg      config.ExternalAuth
		loopback bool
		wantLog  string
	}{
		{name: "timeout", cfg: config.ExternalAuth{URL: slow.URL, Timeouts: &config.Timeouts{Response: config.Duration(1)}}, loopback: true, wantLog: "timeout"},
		{name: "connection refused", cfg: config.ExternalAuth{URL: down.URL}, loopback: true, wantLog: "refused"},
		{name: "loopback refused by the address rule", cfg: config.ExternalAuth{URL: up.URL}, wantLog: "loopback address"},
		{name: "unknown TLS authority", cfg: config.ExternalAuth{URL: startTLSAuth(t).URL + "/"}, loopback: true, wantLog: "certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &member{}
			var logs strings.Builder
			h, err := New(&tt.cfg, Options{AllowLoopback: tt.loopback, Log: newLogger(&logs)}, m)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			t.Cleanup(h.Close)
			w := serve(h, newExchange(http.MethodGet, "/", nil))
			if w.Code != 500 || m.calls.Load() != 0 {
				t.Errorf("status = %d, member calls = %d; want 500 and 0", w.Code, m.calls.Load())
			}
			if !strings.Contains(logs.String(), tt.wantLog) {
				t.Errorf("log = %q, want it to mention %q", logs.String(), tt.wantLog)
			}
		})
	}
}

func TestSignin(t *testing.T) {
	tests := []struct {
		name, signin, param, target string
		want                        string
	}{
		{name: "rd appended", signin: "https://login.example.com/start", target: "/a%20b/c?q=1&r=2",
			want: "https://login.example.com/start?rd=http://app.test%2Fa%2520b%2Fc%3Fq%3D1%26r%3D2"},
		{name: "query kept", signin: "https://login.example.com/start?client=x", target: "/p",
			want: "https://login.example.com/start?client=x&rd=http://app.test%2Fp"},
		{name: "parameter already set", signin: "https://login.example.com/start?rd=https://app.test/", target: "/p",
			want: "https://login.example.com/start?rd=https://app.test/"},
		{name: "custom parameter", signin: "https://login.example.com/", param: "return_to", target: "/p",
			want: "https://login.example.com/?return_to=http://app.test%2Fp"},
		{name: "variables, parameter set", signin: "https://$host/oauth2/start?rd=$escaped_request_uri", target: "/p?q=1",
			want: "https://app.test/oauth2/start?rd=%2Fp%3Fq%3D1"},
		{name: "variables, rd appended", signin: "$scheme://$host/oauth2/start", target: "/p",
			want: "http://app.test/oauth2/start?rd=http://app.test%2Fp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := startAuth(t, handle(withHeaders(401, "Set-Cookie", "csrf=1")))
			h, m, _ := newHandler(t, &config.ExternalAuth{URL: svc.URL, SigninURL: tt.signin, SigninRedirectParam: tt.param})
			w := serve(h, newExchange(http.MethodGet, tt.target, nil))
			if w.Code != http.StatusFound || m.calls.Load() != 0 {
				t.Fatalf("status = %d, member calls = %d; want 302 and 0", w.Code, m.calls.Load())
			}
			if got := w.Header().Get("Location"); got != tt.want {
				t.Errorf("Location = %q, want %q", got, tt.want)
			}
			if got := w.Header().Get("Set-Cookie"); got != "csrf=1" {
				t.Errorf("Set-Cookie = %q, want the service's csrf=1", got)
			}
		})
	}
}

func TestKeepalive(t *testing.T) {
	tests := []struct {
		name      string
		keepalive *config.AuthKeepalive
		requests  int
		wantConns int
	}{
		{name: "no keepalive: one connection each", requests: 3, wantConns: 3},
		{name: "keepalive reuses", keepalive: &config.AuthKeepalive{Connections: 2}, requests: 4, wantConns: 1},
		{name: "requests per connection", keepalive: &config.AuthKeepalive{Connections: 2, Requests: 2}, requests: 6, wantConns: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := startAuth(t, handle(status(200)))
			h, _, _ := newHandler(t, &config.ExternalAuth{URL: svc.URL, Keepalive: tt.keepalive})
			for range tt.requests {
				if w := serve(h, newExchange(http.MethodGet, "/", nil)); w.Code != 200 {
					t.Fatalf("status = %d, want 200", w.Code)
				}
			}
			if got := svc.connections(); got != tt.wantConns {
				t.Errorf("connections = %d, want %d", got, tt.wantConns)
			}
		})
	}
}

func TestTLSWithCA(t *testing.T) {
	svc := startTLSAuth(t)
	h, m, _ := newHandler(t, &config.ExternalAuth{URL: svc.URL, TLS: &config.AuthTLS{CAFile: writeCA(t, svc)}})
	if w := serve(h, newExchange(http.MethodGet, "/", nil)); w.Code != 200 || m.calls.Load() != 1 {
		t.Errorf("status = %d, member calls = %d; want 200 and 1", w.Code, m.calls.Load())
	}
}

func TestCloseDropsIdleConnections(t *testing.T) {
	svc := startAuth(t, handle(status(200)))
	h, _, _ := newHandler(t, &config.ExternalAuth{URL: svc.URL, Keepalive: &config.AuthKeepalive{Connections: 4}})
	serve(h, newExchange(http.MethodGet, "/", nil))
	serve(h, newExchange(http.MethodGet, "/", nil))
	if got := svc.connections(); got != 1 {
		t.Fatalf("connections before Close = %d, want 1", got)
	}
	h.Close()
	if w := serve(h, newExchange(http.MethodGet, "/", nil)); w.Code != 200 {
		t.Fatalf("status after Close = %d, want 200", w.Code)
	}
	if got := svc.connections(); got != 2 {
		t.Errorf("connections after Close = %d, want 2 (a new one)", got)
	}
}
