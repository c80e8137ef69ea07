package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// delayMember answers "done" after delay, or stops when the request is
// abandoned.
func delayMember(t *testing.T, delay time.Duration, hits *atomic.Int32) string {
	return startMember(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		select {
		case <-r.Context().Done():
		case <-time.After(delay):
			io.WriteString(w, "done")
		}
	})
}

// TestRouteTimeouts follows the Gateway API's HTTPRouteRequestTimeout and
// HTTPRouteBackendRequestTimeout: a request or try past its bound is
// answered 504, one within it passes, and a try past its bound is tried
// again on another member where the retry rule allows.
func TestRouteTimeouts(t *testing.T) {
	const short, long = 300 * time.Millisecond, 3 * time.Second
	tests := []struct {
		name       string
		route      Route
		delays     []time.Duration
		method     string
		wantStatus int
		wantBody   string
		wantHits   []int32
	}{
		{name: "request within the request timeout", route: Route{RequestTimeout: long}, delays: []time.Duration{0},
			method: "GET", wantStatus: 200, wantBody: "done", wantHits: []int32{1}},
		{name: "request past the request timeout", route: Route{RequestTimeout: short}, delays: []time.Duration{long},
			method: "GET", wantStatus: 504, wantBody: "Gateway Timeout: " + errRequestTimeout.Error() + "\n", wantHits: []int32{1}},
		{name: "the request timeout covers every try", route: Route{RequestTimeout: short}, delays: []time.Duration{long, 0},
			method: "GET", wantStatus: 504, wantBody: "Gateway Timeout: " + errRequestTimeout.Error() + "\n", wantHits: []int32{1, 0}},
		{name: "try within the backend timeout", route: Route{TryTimeout: long}, delays: []time.Duration{0},
			method: "GET", wantStatus: 200, wantBody: "done", wantHits: []int32{1}},
		{name: "try past the backend timeout, GET tried again", route: Route{TryTimeout: short}, delays: []time.Duration{long, 0},
			method: "GET", wantStatus: 200, wantBody: "done", wantHits: []int32{1, 1}},
		{name: "try past the backend timeout, POST answered 504", route: Route{TryTimeout: short}, delays: []time.Duration{long, 0},
			method: "POST", wantStatus: 504, wantBody: "Gateway Timeout: " + sentenceNoAnswer + "\n", wantHits: []int32{1, 0}},
		{name: "each try has its own bound under the request's", route: Route{RequestTimeout: long, TryTimeout: short}, delays: []time.Duration{long, 0},
			method: "GET", wantStatus: 200, wantBody: "done", wantHits: []int32{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits := make([]*atomic.Int32, len(tt.delays))
			var addrs []string
			for i, d := range tt.delays {
				hits[i] = new(atomic.Int32)
				addrs = append(addrs, delayMember(t, d, hits[i]))
			}
			// A new pool's round robin tries its members in order.
			p := buildPool(t, config.Pool{}, addrs...)
			h := New([]Target{{Pool: p, Weight: 1}}, tt.route, Options{Log: quietLog})
			start := time.Now()
			w := serve(h, exchangeFor(httptest.NewRequest(tt.method, "/t", nil)))
			if w.Code != tt.wantStatus || w.Body.String() != tt.wantBody {
				t.Errorf("got %d %q, want %d %q", w.Code, w.Body.String(), tt.wantStatus, tt.wantBody)
			}
			for i, want := range tt.wantHits {
				if got := hits[i].Load(); got != want {
					t.Errorf("member %d: %d requests, want %d", i, got, want)
				}
			}
			if elapsed := time.Since(start); elapsed > 2*time.Second {
				t.Errorf("took %s: a bound did not end the wait", elapsed)
			}
		})
	}
}

// TestRequestTimeoutCutsTheAnswer checks that the request timeout also
// bounds the answer's body: past it, the connection is cut.
func TestRequestTimeoutCutsTheAnswer(t *testing.T) {
	addr := startMember(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", 10))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	})
	h := New([]Target{{Pool: buildPool(t, config.Pool{}, addr), Weight: 1}}, Route{RequestTimeout: 300 * time.Millisecond}, Options{Log: quietLog})
	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Errorf("recovered %v, want http.ErrAbortHandler (the connection is cut)", v)
		}
	}()
	serve(h, exchangeFor(httptest.NewRequest("GET", "/", nil)))
}

// flakyMember answers code to the first fail requests, then 200 "done".
func flakyMember(t *testing.T, code int, fail int32, hits *atomic.Int32) string {
	return startMember(t, func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) <= fail {
			w.WriteHeader(code)
			return
		}
		io.WriteString(w, "done")
	})
}

// TestRouteRetry follows the Gateway API's HTTPRouteRetry conformance test,
// whose backend has one member: the route's codes and attempts decide, and
// tries go back to the member; the retry rule still keeps a POST that
// reached a member from being sent again.
func TestRouteRetry(t *testing.T) {
	all := []int{500, 502, 503, 504}
	tests := []struct {
		name       string
		retry      Retry
		code       int
		fail       int32
		method     string
		wantStatus int
		wantHits   int32
	}{
		{"500 retried twice within 3 attempts", Retry{Codes: []int{500}, Attempts: 3}, 500, 2, "GET", 200, 3},
		{"500 more often than 3 attempts", Retry{Codes: []int{500}, Attempts: 3}, 500, 4, "GET", 500, 4},
		{"503 is not a code of the route", Retry{Codes: []int{500}, Attempts: 3}, 503, 2, "GET", 503, 1},
		{"502 within 2 attempts", Retry{Codes: all, Attempts: 2}, 502, 1, "GET", 200, 2},
		{"504 more often than 2 attempts", Retry{Codes: all, Attempts: 2}, 504, 3, "GET", 504, 3},
		{"default codes", Retry{Attempts: 1}, 503, 1, "GET", 200, 2},
		{"default codes leave 500", Retry{Attempts: 1}, 500, 1, "GET", 500, 1},
		{"POST is not sent again", Retry{Codes: all, Attempts: 2}, 500, 1, "POST", 500, 1},
		{"with a backoff", Retry{Codes: all, Attempts: 2, Backoff: 20 * time.Millisecond}, 500, 2, "GET", 200, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hits atomic.Int32
			p := buildPool(t, config.Pool{}, flakyMember(t, tt.code, tt.fail, &hits))
			h := New([]Target{{Pool: p, Weight: 1}}, Route{Retry: &tt.retry}, Options{Log: quietLog})
			start := time.Now()
			w := serve(h, exchangeFor(httptest.NewRequest(tt.method, "/retry", nil)))
			if w.Code != tt.wantStatus || hits.Load() != tt.wantHits {
				t.Errorf("got %d after %d tries, want %d after %d", w.Code, hits.Load(), tt.wantStatus, tt.wantHits)
			}
			if tt.retry.Backoff > 0 && time.Since(start) < 60*time.Millisecond {
				t.Errorf("answered after %s: two retries wait 20ms then 40ms", time.Since(start))
			}
		})
	}
}

func TestRetryWait(t *testing.T) {
	r := Retry{Backoff: 100 * time.Millisecond}
	for n, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 4: 800 * time.Millisecond, 5: time.Second, 9: time.Second} {
		if got := r.wait(n); got != want {
			t.Errorf("wait(%d) = %s, want %s", n, got, want)
		}
	}
}

// TestRetryBackoffWithinRequestTimeout checks that the request timeout cuts
// a backoff.
func TestRetryBackoffWithinRequestTimeout(t *testing.T) {
	var hits atomic.Int32
	p := buildPool(t, config.Pool{}, flakyMember(t, 503, 5, &hits))
	h := New([]Target{{Pool: p, Weight: 1}}, Route{RequestTimeout: 200 * time.Millisecond, Retry: &Retry{Attempts: 3, Backoff: time.Second}}, Options{Log: quietLog})
	start := time.Now()
	w := serve(h, exchangeFor(httptest.NewRequest("GET", "/", nil)))
	if w.Code != http.StatusGatewayTimeout || hits.Load() != 1 || time.Since(start) > time.Second {
		t.Errorf("got %d after %d tries and %s, want 504 after 1 try at the request timeout", w.Code, hits.Load(), time.Since(start))
	}
}

func TestRouteRetryKeepsPoolRetries(t *testing.T) {
	var hits atomic.Int32
	p := buildPool(t, config.Pool{Retries: intp(0)}, flakyMember(t, 500, 1, &hits))
	h := New([]Target{{Pool: p, Weight: 1}}, Route{Retry: &Retry{Codes: []int{500}, Attempts: -1}}, Options{Log: quietLog})
	if w := serve(h, exchangeFor(httptest.NewRequest("GET", "/", nil))); w.Code != 500 || hits.Load() != 1 {
		t.Errorf("got %d after %d tries, want 500 after 1 (the pool's retries: 0)", w.Code, hits.Load())
	}
}
