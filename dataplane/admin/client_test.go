package admin

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/upstream"
)

// serveUnix serves h on a unix socket in a temporary directory and returns
// a Client for it.
func serveUnix(t *testing.T, h http.Handler) *Client {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	c := NewClient(path)
	t.Cleanup(c.http.CloseIdleConnections)
	return c
}

func TestClientReload(t *testing.T) {
	tests := []struct {
		name      string
		reloadErr error
		wantGen   uint64
		check     func(t *testing.T, err error)
	}{
		{name: "ok", wantGen: 7, check: func(t *testing.T, err error) {
			if err != nil {
				t.Errorf("Reload error = %v, want none", err)
			}
		}},
		{name: "refused", reloadErr: &ConfigError{Problems: []string{"a: bad", "b: worse"}}, check: func(t *testing.T, err error) {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("Reload error = %v (%T), want *ConfigError", err, err)
			}
			if want := []string{"a: bad", "b: worse"}; !reflect.DeepEqual(ce.Problems, want) {
				t.Errorf("Problems = %q, want %q", ce.Problems, want)
			}
		}},
		{name: "failed", reloadErr: errors.New("disk on fire"), check: func(t *testing.T, err error) {
			var ae *APIError
			if !errors.As(err, &ae) {
				t.Fatalf("Reload error = %v (%T), want *APIError", err, err)
			}
			if ae.Status != 500 || ae.Message != "disk on fire" {
				t.Errorf("APIError = %+v, want status 500 and message %q", ae, "disk on fire")
			}
			if want := "admin API: 500 Internal Server Error: disk on fire"; ae.Error() != want {
				t.Errorf("Error() = %q, want %q", ae.Error(), want)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newFakeBackend()
			b.reloadErr = tt.reloadErr
			c := serveUnix(t, Handler(b))
			gen, err := c.Reload(context.Background())
			if gen != tt.wantGen {
				t.Errorf("generation = %d, want %d", gen, tt.wantGen)
			}
			tt.check(t, err)
		})
	}
}

func TestClientSetMembers(t *testing.T) {
	tests := []struct {
		name       string
		pool       string
		members    []config.Member
		setErr     error
		wantStatus int // 0 for success
		wantIn     string
		wantSet    []setCall
	}{
		{name: "ok", pool: "web", members: []config.Member{{Address: "10.0.0.9:80", Weight: 2}},
			wantSet: []setCall{{"web", []config.Member{{Address: "10.0.0.9:80", Weight: 2}}}}},
		{name: "nil members sent as empty list", pool: "web",
			wantSet: []setCall{{"web", []config.Member{}}}},
		{name: "name escaped", pool: "a b/c", members: []config.Member{},
			wantSet: []setCall{{"a b/c", []config.Member{}}}},
		{name: "unknown pool", pool: "nope", setErr: upstream.ErrUnknownPool, wantStatus: 404, wantIn: `no pool "nope"`,
			wantSet: []setCall{{"nope", []config.Member{}}}},
		{name: "static pool", pool: "web", setErr: upstream.ErrStaticPool, wantStatus: 409, wantIn: "members_from: static",
			wantSet: []setCall{{"web", []config.Member{}}}},
		{name: "invalid member", pool: "web", members: []config.Member{{Address: "x"}}, wantStatus: 400, wantIn: "members[0].address",
			wantSet: []setCall{{"web", []config.Member{{Address: "x"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newFakeBackend()
			b.setErr = tt.setErr
			c := serveUnix(t, Handler(b))
			err := c.SetMembers(context.Background(), tt.pool, tt.members)
			if tt.wantStatus == 0 {
				if err != nil {
					t.Errorf("SetMembers error = %v, want none", err)
				}
			} else {
				var ae *APIError
				if !errors.As(err, &ae) {
					t.Fatalf("SetMembers error = %v (%T), want *APIError", err, err)
				}
				if ae.Status != tt.wantStatus || !strings.Contains(ae.Message, tt.wantIn) {
					t.Errorf("APIError = %+v, want status %d and a message containing %q", ae, tt.wantStatus, tt.wantIn)
				}
			}
			if !reflect.DeepEqual(b.setCalls, tt.wantSet) {
				t.Errorf("SetMembers calls = %+v, want %+v", b.setCalls, tt.wantSet)
			}
		})
	}
}

func TestClientReads(t *testing.T) {
	b := newFakeBackend()
	c := serveUnix(t, Handler(b))
	ctx := context.Background()

	pools, err := c.Pools(ctx)
	if err != nil {
		t.Fatalf("Pools: %v", err)
	}
	if !reflect.DeepEqual(pools, b.pools) {
		t.Errorf("Pools = %+v, want %+v", pools, b.pools)
	}
	p, err := c.Pool(ctx, "web")
	if err != nil {
		t.Fatalf("Pool: %v", err)
	}
	if !reflect.DeepEqual(p, b.pools[0]) {
		t.Errorf("Pool = %+v, want %+v", p, b.pools[0])
	}
	_, err = c.Pool(ctx, "nope")
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 404 || ae.Message != `no pool "nope"` {
		t.Errorf("Pool(nope) error = %v, want APIError 404 no pool \"nope\"", err)
	}
	s, err := c.Status(ctx)
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if !s.LoadedAt.Equal(b.status.LoadedAt) {
		t.Errorf("LoadedAt = %v, want %v", s.LoadedAt, b.status.LoadedAt)
	}
	s.LoadedAt = b.status.LoadedAt
	if !reflect.DeepEqual(s, b.status) {
		t.Errorf("Status = %+v, want %+v", s, b.status)
	}
}

func TestClientErrors(t *testing.T) {
	tests := []struct {
		name        string
		handler     http.HandlerFunc
		wantStatus  int
		wantMessage string
	}{
		{name: "JSON error", handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"error": "busy"}`))
		}, wantStatus: 409, wantMessage: "busy"},
		{name: "plain text error", handler: func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "not here", http.StatusNotFound)
		}, wantStatus: 404, wantMessage: "not here\n"},
		{name: "JSON without error field", handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte(`{"other": 1}`))
		}, wantStatus: 502, wantMessage: `{"other": 1}`},
		{name: "422 where none is expected", handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusUnprocessableEntity)
			w.Write([]byte(`{"errors": ["x"]}`))
		}, wantStatus: 422, wantMessage: `{"errors": ["x"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serveUnix(t, tt.handler)
			err := c.SetMembers(context.Background(), "web", nil)
			var ae *APIError
			if !errors.As(err, &ae) {
				t.Fatalf("error = %v (%T), want *APIError", err, err)
			}
			if ae.Status != tt.wantStatus || ae.Message != tt.wantMessage {
				t.Errorf("APIError = {%d %q}, want {%d %q}", ae.Status, ae.Message, tt.wantStatus, tt.wantMessage)
			}
		})
	}
}

func TestClientRequest(t *testing.T) {
	var method, path, contentType string
	c := serveUnix(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method, path, contentType = r.Method, r.URL.EscapedPath(), r.Header.Get("Content-Type")
		w.Write([]byte(`{}`))
	}))
	if err := c.SetMembers(context.Background(), "a b", nil); err != nil {
		t.Fatal(err)
	}
	if method != "PUT" || path != "/v1/upstreams/a%20b" || contentType != "application/json" {
		t.Errorf("request = %s %s (Content-Type %q), want PUT /v1/upstreams/a%%20b (application/json)", method, path, contentType)
	}
}

func TestClientNoServer(t *testing.T) {
	c := NewClient(filepath.Join(t.TempDir(), "none.sock"))
	_, err := c.Status(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "admin API: ") {
		t.Errorf("Status without a server: error = %v, want one starting with %q", err, "admin API: ")
	}
	var ae *APIError
	if errors.As(err, &ae) {
		t.Errorf("error = %v, want a connection error, not an APIError", err)
	}
}

// drainingBackend is a backend whose drain delay is over when the test
// closes over; calls receives each Drain call, and early counts the
// status asked for before the delay was over.
type drainingBackend struct {
	*fakeBackend
	calls chan struct{}
	over  chan struct{}
	early *atomic.Int32
}

func (b drainingBackend) Drain() <-chan struct{} {
	b.calls <- struct{}{}
	return b.over
}

func (b drainingBackend) Status() Status {
	select {
	case <-b.over:
	default:
		b.early.Add(1)
	}
	return b.fakeBackend.Status()
}

// TestClientDrain checks that POST /v1/drain answers only once the drain
// delay is over, with the status.
func TestClientDrain(t *testing.T) {
	b := drainingBackend{fakeBackend: newFakeBackend(), calls: make(chan struct{}, 1), over: make(chan struct{}), early: new(atomic.Int32)}
	c := serveUnix(t, Handler(b))
	type answer struct {
		status Status
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		s, err := c.Drain(context.Background())
		answered <- answer{s, err}
	}()
	<-b.calls
	select {
	case a := <-answered:
		t.Fatalf("Drain answered %+v, %v before the drain delay was over", a.status, a.err)
	default:
	}
	close(b.over)
	if a := <-answered; a.err != nil || a.status.Generation != 7 {
		t.Errorf("Drain = %+v, %v; want the status of generation 7", a.status, a.err)
	}
	if n := b.early.Load(); n != 0 {
		t.Errorf("the answer read the status %d times before the drain delay was over, want 0", n)
	}
}
