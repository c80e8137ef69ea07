package extauth

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

func TestVariables(t *testing.T) {
	x := newExchange(http.MethodPost, "/a%20b/c?q=1&r=2", nil)
	x.HTTP.Host = "App.Test:8080"
	tests := []struct{ template, want string }{
		{"$host", "app.test"},
		{"$http_host|$best_http_host", "App.Test:8080|App.Test:8080"},
		{"$scheme|${pass_access_scheme}", "http|http"},
		{"$request_uri", "/a%20b/c?q=1&r=2"},
		{"$escaped_request_uri", "%2Fa%2520b%2Fc%3Fq%3D1%26r%3D2"},
		{"$args|$request_method|$remote_addr", "q=1&r=2|POST|192.0.2.10"},
		{"$scheme://$host$request_uri", "http://app.test/a%20b/c?q=1&r=2"},
	}
	for _, tt := range tests {
		if got := newTemplate(tt.template).expand(x); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.template, got, tt.want)
		}
	}
	if newTemplate("https://auth.test/check") != nil {
		t.Error("a value without variables has a template")
	}
	x.HTTP.Host = "[2001:DB8::1]:80"
	if got := newTemplate("$host").expand(x); got != "[2001:db8::1]" {
		t.Errorf("$host of an IPv6 Host = %q, want [2001:db8::1]", got)
	}
}

// TestURLAndRedirectVariables: the service is asked at its URL with the
// request's variables, and X-Auth-Request-Redirect carries them too.
func TestURLAndRedirectVariables(t *testing.T) {
	svc := startAuth(t, handle(status(200)))
	var gotQuery url.Values
	var mu sync.Mutex
	inner := svc.Config.Handler
	svc.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotQuery = r.URL.Query()
		mu.Unlock()
		inner.ServeHTTP(w, r)
	})
	h, _, _ := newHandler(t, &config.ExternalAuth{
		URL:             svc.URL + "/check?uri=$escaped_request_uri&m=$request_method",
		RequestRedirect: "$scheme://$host$request_uri",
	})
	if w := serve(h, newExchange(http.MethodGet, "/p?q=1", nil)); w.Code != 200 {
		t.Fatalf("status = %d, want 200", w.Code)
	}
	mu.Lock()
	defer mu.Unlock()
	if gotQuery.Get("uri") != "/p?q=1" || gotQuery.Get("m") != "GET" {
		t.Errorf("the service's query = %v, want uri=/p?q=1 and m=GET", gotQuery)
	}
	if got := svc.seen().header.Get("X-Auth-Request-Redirect"); got != "http://app.test/p?q=1" {
		t.Errorf("X-Auth-Request-Redirect = %q, want http://app.test/p?q=1", got)
	}
}

// selfListener is a listener standing for ramjetd's own: it records the
// Host, the server name and whether the request was a self subrequest.
type selfListener struct {
	*httptest.Server
	mu        sync.Mutex
	host, sni string
	marked    bool
}

func startSelfListener(t *testing.T, tls bool) *selfListener {
	s := &selfListener{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.host, s.marked = r.Host, isSelfSubrequest(r)
		if r.TLS != nil {
			s.sni = r.TLS.ServerName
		}
		w.Header().Set("X-Auth-Request-User", "alice")
	})
	if tls {
		s.Server = httptest.NewTLSServer(handler)
	} else {
		s.Server = httptest.NewServer(handler)
	}
	t.Cleanup(s.Close)
	return s
}

// TestSelfSubrequest: with self, the subrequest goes to ramjetd's own
// listener of the URL's scheme (loopback allowed whatever the address
// rule says), with the request's host as Host and server name, marked as
// a self subrequest; kept connections (auth-keepalive) go there too.
func TestSelfSubrequest(t *testing.T) {
	keep := &config.AuthKeepalive{Connections: 4}
	tests := []struct {
		name, url string
		tls       bool
		keepalive *config.AuthKeepalive
		wantSNI   string
	}{
		{"https to the TLS listener", "https://$host/oauth2/auth", true, nil, "app.test"},
		{"http to the plain listener", "http://$http_host/oauth2/auth", false, nil, ""},
		{"https with kept connections", "https://$host/oauth2/auth", true, keep, "app.test"},
		{"http with kept connections", "http://$host/oauth2/auth", false, keep, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			own := startSelfListener(t, tt.tls)
			other := startSelfListener(t, !tt.tls)
			listeners := map[string]*config.Listener{"a": {Address: other.Listener.Addr().String()}}
			_, port, _ := net.SplitHostPort(own.Listener.Addr().String())
			listeners["b"] = &config.Listener{Address: net.JoinHostPort("0.0.0.0", port)}
			if tt.tls {
				listeners["b"].TLS = &config.ListenerTLS{}
			} else {
				listeners["a"].TLS = &config.ListenerTLS{}
			}
			m := &member{}
			h, err := New(&config.ExternalAuth{URL: tt.url, Self: true, Keepalive: tt.keepalive, ResponseHeaders: []string{"X-Auth-Request-User"}},
				Options{Listeners: listeners, Log: newLogger(&strings.Builder{})}, m)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			t.Cleanup(h.Close)
			if w := serve(h, newExchange(http.MethodGet, "/private", nil)); w.Code != 200 || m.header.Get("X-Auth-Request-User") != "alice" {
				t.Fatalf("status = %d, member saw user %q; want 200 and alice", w.Code, m.header.Get("X-Auth-Request-User"))
			}
			own.mu.Lock()
			defer own.mu.Unlock()
			if own.host != "app.test" || own.sni != tt.wantSNI || !own.marked {
				t.Errorf("own listener saw Host %q, server name %q, marked %v; want app.test, %q, true", own.host, own.sni, own.marked, tt.wantSNI)
			}
		})
	}
}

// TestSelfSubrequestLoop: a self subrequest that reaches external
// authentication again is answered 500 and never asks the service or
// reaches the member; a client's forged mark is not one.
func TestSelfSubrequestLoop(t *testing.T) {
	svc := startAuth(t, handle(status(200)))
	h, m, logs := newHandler(t, &config.ExternalAuth{URL: svc.URL})
	x := newExchange(http.MethodGet, "/", http.Header{selfHeader: {selfToken}})
	if w := serve(h, x); w.Code != 500 || m.calls.Load() != 0 || svc.calls.Load() != 0 {
		t.Errorf("a self subrequest: status %d, member calls %d, service calls %d; want 500, 0, 0", w.Code, m.calls.Load(), svc.calls.Load())
	}
	if !strings.Contains(logs.String(), "a loop") {
		t.Errorf("log = %q, want it to name the loop", logs.String())
	}
	forged := newExchange(http.MethodGet, "/", http.Header{selfHeader: {"guess"}})
	if w := serve(h, forged); w.Code != 200 {
		t.Errorf("a forged mark: status %d, want 200 (judged by the service)", w.Code)
	}
}
