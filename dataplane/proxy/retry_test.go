package proxy

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/upstream"
)

func TestIdempotent(t *testing.T) {
	tests := []struct {
		method string
		want   bool
	}{
		{"GET", true}, {"HEAD", true}, {"OPTIONS", true}, {"PUT", true}, {"DELETE", true},
		{"POST", false}, {"PATCH", false}, {"CONNECT", false}, {"TRACE", false}, {"get", false}, {"PROPFIND", false},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			if got := idempotent(tt.method); got != tt.want {
				t.Errorf("idempotent(%q) = %v, want %v", tt.method, got, tt.want)
			}
		})
	}
}

func TestRetryStatus(t *testing.T) {
	for _, tt := range []struct {
		name  string
		route Route
		codes []int
	}{
		{"pool's rule", Route{}, []int{502, 503, 504}},
		{"route policy without codes", Route{Retry: &Retry{}}, []int{502, 503, 504}},
		{"route policy's codes", Route{Retry: &Retry{Codes: []int{500, 429}}}, []int{429, 500}},
	} {
		f := forwarding{h: &Handler{route: tt.route}}
		for code := 100; code < 600; code++ {
			want := slices.Contains(tt.codes, code)
			if got := f.retryStatus(code); got != want {
				t.Errorf("%s: retryStatus(%d) = %v, want %v", tt.name, code, got, want)
			}
		}
	}
}

// bodyState makes a requestBody in one of the states a try can leave it.
type bodyState struct {
	name string
	make func() *requestBody
}

// streamed returns a streamed body after a try read sent bytes of it and
// then readErr (nil: nothing more yet).
func streamed(sent int, readErr error) func() *requestBody {
	return func() *requestBody {
		c := &countingBody{src: &scriptedReader{steps: []step{{data: strings.Repeat("x", sent), err: readErr}}}}
		if sent > 0 || readErr != nil {
			c.Read(make([]byte, sent+1))
		}
		return &requestBody{streamed: c}
	}
}

var (
	bodyNone        = bodyState{"no body", func() *requestBody { return &requestBody{replay: []byte{}} }}
	bodyKept        = bodyState{"kept body", func() *requestBody { return &requestBody{replay: []byte("abc")} }}
	bodyUnsent      = bodyState{"streamed, nothing sent", streamed(0, nil)}
	bodySent        = bodyState{"streamed, bytes sent", streamed(10, nil)}
	bodyTooLarge    = bodyState{"streamed, over the limit", streamed(10, &http.MaxBytesError{Limit: 5})}
	bodyBrokenEarly = bodyState{"streamed, broken before a byte", streamed(0, io.ErrUnexpectedEOF)}
)

// TestCanRetry is the retry rule as a table over the error of the last try
// × the state of the request body × the method.
func TestCanRetry(t *testing.T) {
	errorKinds := []struct {
		name string
		err  error // nil: the member answered 502, 503 or 504
	}{
		{"502/503/504 answer", nil},
		{"connect failed", dialError(syscall.ECONNREFUSED)},
		{"connect timed out", dialError(timeoutError{})},
		{"response timed out", timeoutError{}},
		{"connection broken", io.ErrUnexpectedEOF},
		{"canceled", context.Canceled},
	}
	// want[error kind][body state] = {idempotent methods, others}
	type rule struct{ idempotent, other bool }
	tests := []struct {
		body bodyState
		want map[string]rule
	}{
		{bodyNone, map[string]rule{
			"502/503/504 answer": {true, false}, "connect failed": {true, true}, "connect timed out": {true, true},
			"response timed out": {true, false}, "connection broken": {true, false}, "canceled": {false, false}}},
		{bodyKept, map[string]rule{
			"502/503/504 answer": {true, false}, "connect failed": {true, true}, "connect timed out": {true, true},
			"response timed out": {true, false}, "connection broken": {true, false}, "canceled": {false, false}}},
		// A streamed body is retried only after a failed connect: once the
		// member has the head, the transport may still be reading the body
		// (see TestStreamedBodyRetrySplitsBody).
		{bodyUnsent, map[string]rule{
			"502/503/504 answer": {false, false}, "connect failed": {true, true}, "connect timed out": {true, true},
			"response timed out": {false, false}, "connection broken": {false, false}, "canceled": {false, false}}},
		{bodySent, map[string]rule{
			"502/503/504 answer": {false, false}, "connect failed": {false, false}, "connect timed out": {false, false},
			"response timed out": {false, false}, "connection broken": {false, false}, "canceled": {false, false}}},
		{bodyTooLarge, map[string]rule{
			"502/503/504 answer": {false, false}, "connect failed": {false, false}, "connect timed out": {false, false},
			"response timed out": {false, false}, "connection broken": {false, false}, "canceled": {false, false}}},
		{bodyBrokenEarly, map[string]rule{
			"502/503/504 answer": {false, false}, "response timed out": {false, false}, "connection broken": {false, false}, "canceled": {false, false}}},
	}
	methods := []string{"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "POST", "PATCH"}
	for _, tt := range tests {
		for _, ek := range errorKinds {
			r, ok := tt.want[ek.name]
			if !ok {
				continue // cannot happen: a try that read the body had connected
			}
			for _, method := range methods {
				t.Run(fmt.Sprintf("%s/%s/%s", tt.body.name, ek.name, method), func(t *testing.T) {
					f := &forwarding{x: exchangeFor(httptest.NewRequest(method, "/", nil)), body: tt.body.make()}
					want := r.other
					if idempotent(method) {
						want = r.idempotent
					}
					if got := f.canRetry(ek.err); got != want {
						t.Errorf("canRetry after %q with %s, %s = %v, want %v", ek.name, tt.body.name, method, got, want)
					}
				})
			}
		}
	}
}

func TestPickPool(t *testing.T) {
	a := buildPool(t, config.Pool{}, "127.0.0.1:1")
	b := buildPool(t, config.Pool{}, "127.0.0.1:2")
	c := buildPool(t, config.Pool{}, "127.0.0.1:3")
	tests := []struct {
		name    string
		targets []Target
		want    map[*upstream.Pool]float64 // share of picks
	}{
		{name: "one target", targets: []Target{{Pool: a, Weight: 5}}, want: map[*upstream.Pool]float64{a: 1}},
		{name: "one to three", targets: []Target{{Pool: a, Weight: 1}, {Pool: b, Weight: 3}}, want: map[*upstream.Pool]float64{a: 0.25, b: 0.75}},
		{name: "weight zero gets nothing", targets: []Target{{Pool: a, Weight: 0}, {Pool: b, Weight: 2}, {Pool: c, Weight: 2}},
			want: map[*upstream.Pool]float64{a: 0, b: 0.5, c: 0.5}},
		{name: "last target with zero weight", targets: []Target{{Pool: a, Weight: 9}, {Pool: b, Weight: 1}, {Pool: c, Weight: 0}},
			want: map[*upstream.Pool]float64{a: 0.9, b: 0.1, c: 0}},
	}
	const n = 40000
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := New(tt.targets, Route{}, Options{})
			counts := map[*upstream.Pool]int{}
			for range n {
				counts[h.pickTarget().Pool]++
			}
			for i, target := range tt.targets {
				share := float64(counts[target.Pool]) / n
				want := tt.want[target.Pool]
				if want == 0 && counts[target.Pool] != 0 {
					t.Errorf("target %d (weight 0) picked %d times in %d, want never", i, counts[target.Pool], n)
				}
				if math.Abs(share-want) > 0.015 {
					t.Errorf("target %d (weight %d) picked %.3f of the time, want %.3f ± 0.015", i, target.Weight, share, want)
				}
			}
		})
	}
}
