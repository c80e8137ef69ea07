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
