package proxy

import (
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/upstream"
)

func TestStatusSet(t *testing.T) {
	var s StatusSet
	for _, code := range []int{400, 404, 463, 464, 503, 599, 399, 600, 0, -1} {
		s.Add(code)
	}
	tests := []struct {
		code int
		want bool
	}{
		{400, true}, {404, true}, {463, true}, {464, true}, {503, true}, {599, true},
		{401, false}, {465, false}, {500, false}, {399, false}, {600, false}, {0, false}, {-1, false}, {1000, false},
	}
	for _, tc := range tests {
		if got := s.Has(tc.code); got != tc.want {
			t.Errorf("Has(%d) = %t, want %t", tc.code, got, tc.want)
		}
	}
}

func TestIntercepts(t *testing.T) {
	pages := func(own bool) *ErrorPages {
		e := &ErrorPages{OwnAnswersOnly: own, Pool: &upstream.Pool{}}
		e.Statuses.Add(404)
		return e
	}
	tests := []struct {
		name   string
		e      *ErrorPages
		status int
		own    bool
		want   bool
	}{
		{"nil", nil, 404, false, false},
		{"listed member answer", pages(false), 404, false, true},
		{"listed own answer", pages(false), 404, true, true},
		{"unlisted", pages(false), 503, true, false},
		{"own answers only: member", pages(true), 404, false, false},
		{"own answers only: own", pages(true), 404, true, true},
		{"no error backend", &ErrorPages{}, 404, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.e.intercepts(tc.status, tc.own); got != tc.want {
				t.Errorf("intercepts(%d, own %t) = %t, want %t", tc.status, tc.own, got, tc.want)
			}
		})
	}
}
