package admin

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/upstream"
)

// fakeBackend answers from fixed data and records SetMembers calls.
type fakeBackend struct {
	generation uint64
	reloadErr  error
	setErr     error
	pools      []Pool
	status     Status

	setCalls []setCall
}

type setCall struct {
	pool    string
	members []config.Member
}

func (b *fakeBackend) Reload() (uint64, error) {
	if b.reloadErr != nil {
		return 0, b.reloadErr
	}
	return b.generation, nil
}

// SetMembers validates members as the daemon does (without
// allow_loopback_members), then answers setErr.
func (b *fakeBackend) SetMembers(pool string, members []config.Member) error {
	b.setCalls = append(b.setCalls, setCall{pool, members})
	if err := config.ValidateMembers(members, false); err != nil {
		return &MembersError{Err: err}
	}
	return b.setErr
}

func (b *fakeBackend) Pools() []Pool { return b.pools }

func (b *fakeBackend) Pool(name string) (Pool, bool) {
	for _, p := range b.pools {
		if p.Name == name {
			return p, true
		}
	}
	return Pool{}, false
}

func (b *fakeBackend) Status() Status { return b.status }

// Drain answers a drain whose delay is over.
func (b *fakeBackend) Drain() <-chan struct{} {
	over := make(chan struct{})
	close(over)
	return over
}

func newFakeBackend() *fakeBackend {
	return &fakeBackend{
		generation: 7,
		pools: []Pool{{
			Name: "web", MembersFrom: config.MembersAPI, Balance: config.BalanceRoundRobin, Scheme: config.SchemeHTTP,
			Retries: 1, InFlight: 2, Failures: 3, MemberCount: 1,
			Members: []Member{{Address: "10.0.0.1:80", Weight: 1, InFlight: 2, Requests: 9, Failures: 3}},
		}},
		status: Status{
			Generation: 7, ConfigDigest: "abc", LoadedAt: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC), Ready: true,
			Listeners: map[string]string{"health": "127.0.0.1:9000", "http": "127.0.0.1:8080"},
		},
	}
}

const webPoolJSON = `{
  "name": "web",
  "members_from": "api",
  "balance": "round_robin",
  "scheme": "http",
  "retries": 1,
  "in_flight": 2,
  "failures": 3,
  "member_count": 1,
  "members": [
    {
      "address": "10.0.0.1:80",
      "weight": 1,
      "in_flight": 2,
      "requests": 9,
      "failures": 3
    }
  ]
}
`

const usage = `the body must be {\"members\": [{\"address\": \"host:port\", \"weight\": 1}, ...]}: `

func TestHandler(t *testing.T) {
	tests := []struct {
		name      string
		method    string
		path      string
		body      string
		setup     func(b *fakeBackend)
		wantCode  int
		wantBody  string // exact, unless wantIn is set
		wantIn    string // substring of the body
		wantAllow string
		wantSet   []setCall // SetMembers calls the backend receives
	}{
		{name: "reload ok", method: "POST", path: "/v1/reload",
			wantCode: 200, wantBody: "{\n  \"generation\": 7\n}\n"},
		{name: "reload refused", method: "POST", path: "/v1/reload",
			setup:    func(b *fakeBackend) { b.reloadErr = &ConfigError{Problems: []string{"a: bad", "b: worse"}} },
			wantCode: 422, wantBody: "{\n  \"errors\": [\n    \"a: bad\",\n    \"b: worse\"\n  ]\n}\n"},
		{name: "reload refused wrapped", method: "POST", path: "/v1/reload",
			setup: func(b *fakeBackend) {
				b.reloadErr = errors.Join(errors.New("x"), &ConfigError{Problems: []string{"a: bad"}})
			},
			wantCode: 422, wantBody: "{\n  \"errors\": [\n    \"a: bad\"\n  ]\n}\n"},
		{name: "reload failed", method: "POST", path: "/v1/reload",
			setup:    func(b *fakeBackend) { b.reloadErr = errors.New("disk on fire") },
			wantCode: 500, wantBody: "{\n  \"error\": \"disk on fire\"\n}\n"},
		{name: "reload GET", method: "GET", path: "/v1/reload",
			wantCode: 405, wantAllow: "POST", wantBody: "{\n  \"error\": \"GET is not allowed here; use POST\"\n}\n"},

		{name: "pools", method: "GET", path: "/v1/upstreams",
			wantCode: 200, wantBody: "[\n" + indent(webPoolJSON) + "]\n"},
		{name: "pools empty", method: "GET", path: "/v1/upstreams",
			setup:    func(b *fakeBackend) { b.pools = []Pool{} },
			wantCode: 200, wantBody: "[]\n"},
		{name: "pools POST", method: "POST", path: "/v1/upstreams",
			wantCode: 405, wantAllow: "GET", wantBody: "{\n  \"error\": \"POST is not allowed here; use GET\"\n}\n"},

		{name: "pool", method: "GET", path: "/v1/upstreams/web",
			wantCode: 200, wantBody: webPoolJSON},
		{name: "pool unknown", method: "GET", path: "/v1/upstreams/nope",
			wantCode: 404, wantBody: "{\n  \"error\": \"no pool \\\"nope\\\"\"\n}\n"},
		{name: "pool escaped name", method: "GET", path: "/v1/upstreams/a%20b",
			wantCode: 404, wantBody: "{\n  \"error\": \"no pool \\\"a b\\\"\"\n}\n"},
		{name: "pool DELETE", method: "DELETE", path: "/v1/upstreams/web",
			wantCode: 405, wantAllow: "GET, PUT", wantBody: "{\n  \"error\": \"DELETE is not allowed here; use GET, PUT\"\n}\n"},

		{name: "set members", method: "PUT", path: "/v1/upstreams/web",
			body:     `{"members": [{"address": "10.0.0.2:80", "weight": 5}, {"address": "10.0.0.3:80"}]}`,
			wantCode: 200, wantBody: "{\n  \"members\": 2,\n  \"pool\": \"web\"\n}\n",
			wantSet: []setCall{{"web", []config.Member{{Address: "10.0.0.2:80", Weight: 5}, {Address: "10.0.0.3:80"}}}}},
		{name: "set no members", method: "PUT", path: "/v1/upstreams/web", body: `{"members": []}`,
			wantCode: 200, wantBody: "{\n  \"members\": 0,\n  \"pool\": \"web\"\n}\n",
			wantSet: []setCall{{"web", []config.Member{}}}},
		{name: "set unknown pool", method: "PUT", path: "/v1/upstreams/nope", body: `{"members": []}`,
			setup:    func(b *fakeBackend) { b.setErr = upstream.ErrUnknownPool },
			wantCode: 404, wantBody: "{\n  \"error\": \"no pool \\\"nope\\\"\"\n}\n",
			wantSet: []setCall{{"nope", []config.Member{}}}},
		{name: "set static pool", method: "PUT", path: "/v1/upstreams/web", body: `{"members": []}`,
			setup:    func(b *fakeBackend) { b.setErr = upstream.ErrStaticPool },
			wantCode: 409, wantIn: `pool \"web\": the pool's members come from the configuration file`,
			wantSet: []setCall{{"web", []config.Member{}}}},
		{name: "set failed", method: "PUT", path: "/v1/upstreams/web", body: `{"members": []}`,
			setup:    func(b *fakeBackend) { b.setErr = errors.New("boom") },
			wantCode: 500, wantBody: "{\n  \"error\": \"boom\"\n}\n",
			wantSet: []setCall{{"web", []config.Member{}}}},
		{name: "set empty body", method: "PUT", path: "/v1/upstreams/web", body: "",
			wantCode: 400, wantBody: "{\n  \"error\": \"" + usage + "the body is empty or cut short\"\n}\n"},
		{name: "set unknown field", method: "PUT", path: "/v1/upstreams/web", body: `{"members": [], "extra": 1}`,
			wantCode: 400, wantBody: "{\n  \"error\": \"" + usage + "extra: unknown field\"\n}\n"},
		{name: "set wrong type", method: "PUT", path: "/v1/upstreams/web", body: `{"members": "10.0.0.1:80"}`,
			wantCode: 400, wantIn: usage + "members: got a string, want a list"},
		{name: "set two objects", method: "PUT", path: "/v1/upstreams/web", body: `{"members": []} {"members": []}`,
			wantCode: 400, wantIn: usage + "not one JSON object (at byte 16)"},
		{name: "set invalid address", method: "PUT", path: "/v1/upstreams/web", body: `{"members": [{"address": "nope"}]}`,
			wantCode: 400, wantIn: `members[0].address: \"nope\" is not host:port`,
			wantSet: []setCall{{"web", []config.Member{{Address: "nope"}}}}},
		{name: "set duplicate address", method: "PUT", path: "/v1/upstreams/web",
			body:     `{"members": [{"address": "10.0.0.1:80"}, {"address": "10.0.0.1:80"}]}`,
			wantCode: 400, wantIn: `members[1].address: 10.0.0.1:80 is listed twice`,
			wantSet: []setCall{{"web", []config.Member{{Address: "10.0.0.1:80"}, {Address: "10.0.0.1:80"}}}}},
		{name: "set weight too large", method: "PUT", path: "/v1/upstreams/web", body: `{"members": [{"address": "10.0.0.1:80", "weight": 1001}]}`,
			wantCode: 400, wantIn: `members[0].weight: must be 1..1000`,
			wantSet: []setCall{{"web", []config.Member{{Address: "10.0.0.1:80", Weight: 1001}}}}},
		{name: "set loopback member", method: "PUT", path: "/v1/upstreams/web", body: `{"members": [{"address": "10.0.0.1:80"}, {"address": "127.0.0.1:8081"}]}`,
			wantCode: 400, wantIn: `members[1].address: \"127.0.0.1:8081\": 127.0.0.1 is a loopback address`,
			wantSet: []setCall{{"web", []config.Member{{Address: "10.0.0.1:80"}, {Address: "127.0.0.1:8081"}}}}},

		// Only an explicit empty list empties a pool; every other body
		// without members, and every body that is not exactly one object
		// of the documented fields and types, is refused naming the field.
		{name: "set empty object", method: "PUT", path: "/v1/upstreams/web", body: `{}`,
			wantCode: 400, wantIn: usage + `members: is required and must be a list; {\"members\": []} empties the pool`},
		{name: "set null", method: "PUT", path: "/v1/upstreams/web", body: `null`,
			wantCode: 400, wantIn: usage + "members: is required"},
		{name: "set members null", method: "PUT", path: "/v1/upstreams/web", body: `{"members": null}`,
			wantCode: 400, wantIn: usage + "members: is required"},
		{name: "set a list", method: "PUT", path: "/v1/upstreams/web", body: `[]`,
			wantCode: 400, wantIn: usage + "the body: got a list, want an object"},
		{name: "set a string", method: "PUT", path: "/v1/upstreams/web", body: `"10.0.0.1:80"`,
			wantCode: 400, wantIn: usage + "the body: got a string, want an object"},
		{name: "set capitalised name", method: "PUT", path: "/v1/upstreams/web", body: `{"Members": [{"address": "10.0.0.1:80"}]}`,
			wantCode: 400, wantIn: usage + "Members: unknown field"},
		{name: "set capitalised member field", method: "PUT", path: "/v1/upstreams/web", body: `{"members": [{"Address": "10.0.0.1:80"}]}`,
			wantCode: 400, wantIn: usage + "members[0].Address: unknown field"},
		{name: "set misspelt member field", method: "PUT", path: "/v1/upstreams/web", body: `{"members": [{"address": "10.0.0.1:80", "wieght": 2}]}`,
			wantCode: 400, wantIn: usage + "members[0].wieght: unknown field"},
		{name: "set unknown field quoted", method: "PUT", path: "/v1/upstreams/web", body: `{"members": [], "a\nb": 1}`,
			wantCode: 400, wantIn: usage + `\"a\\nb\": unknown field`},
		{name: "set members twice", method: "PUT", path: "/v1/upstreams/web", body: `{"members": [], "members": [{"address": "10.0.0.1:80"}]}`,
			wantCode: 400, wantIn: usage + "members: given twice"},
		{name: "set trailing brace", method: "PUT", path: "/v1/upstreams/web", body: `{"members": []}}`,
			wantCode: 400, wantIn: usage + "not one JSON object (at byte 15)"},
		{name: "set trailing text", method: "PUT", path: "/v1/upstreams/web", body: `{"members": []} x`,
			wantCode: 400, wantIn: usage + "not one JSON object"},
		{name: "set cut short", method: "PUT", path: "/v1/upstreams/web", body: `{"members": [`,
			wantCode: 400, wantIn: usage + "the body is empty or cut short"},
		{name: "set address a number", method: "PUT", path: "/v1/upstreams/web", body: `{"members": [{"address": 80}]}`,
			wantCode: 400, wantIn: usage + "members[0].address: got a number, want a string"},
		{name: "set weight a string", method: "PUT", path: "/v1/upstreams/web", body: `{"members": [{"address": "10.0.0.1:80", "weight": "2"}]}`,
			wantCode: 400, wantIn: usage + "members[0].weight: got a string, want a whole number"},
		{name: "set weight negative", method: "PUT", path: "/v1/upstreams/web", body: `{"members": [{"address": "10.0.0.1:80", "weight": -1}]}`,
			wantCode: 400, wantIn: usage + "members[0].weight: got the number -1, want a whole number"},
		{name: "set weight fractional", method: "PUT", path: "/v1/upstreams/web", body: `{"members": [{"address": "10.0.0.1:80", "weight": 1.5}]}`,
			wantCode: 400, wantIn: usage + "members[0].weight: got the number 1.5, want a whole number"},
		{name: "set member a string", method: "PUT", path: "/v1/upstreams/web", body: `{"members": ["10.0.0.1:80"]}`,
			wantCode: 400, wantIn: usage + "members[0]: got a string, want an object"},
		{name: "set member null", method: "PUT", path: "/v1/upstreams/web", body: `{"members": [null]}`,
			wantCode: 400, wantIn: `members[0].address: \"\" is not host:port`,
			wantSet: []setCall{{"web", []config.Member{{}}}}},

		{name: "status", method: "GET", path: "/v1/status", wantCode: 200, wantBody: `{
  "generation": 7,
  "config_digest": "abc",
  "loaded_at": "2024-05-06T07:08:09Z",
  "ready": true,
  "listeners": {
    "health": "127.0.0.1:9000",
    "http": "127.0.0.1:8080"
  }
}
`},
		{name: "status PUT", method: "PUT", path: "/v1/status",
			wantCode: 405, wantAllow: "GET", wantBody: "{\n  \"error\": \"PUT is not allowed here; use GET\"\n}\n"},

		{name: "drain", method: "POST", path: "/v1/drain", wantCode: 200, wantIn: `"generation": 7`},
		{name: "drain GET", method: "GET", path: "/v1/drain",
			wantCode: 405, wantAllow: "POST", wantBody: "{\n  \"error\": \"GET is not allowed here; use POST\"\n}\n"},

		{name: "unknown endpoint", method: "GET", path: "/v2/status", wantCode: 404,
			wantBody: "{\n  \"error\": \"no such endpoint; see GET /v1/status, GET /v1/upstreams, POST /v1/reload, PUT /v1/upstreams/{pool}, POST /v1/drain\"\n}\n"},
		{name: "pool subpath", method: "GET", path: "/v1/upstreams/web/x", wantCode: 404, wantIn: "no such endpoint"},
		{name: "root", method: "GET", path: "/", wantCode: 404, wantIn: "no such endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newFakeBackend()
			if tt.setup != nil {
				tt.setup(b)
			}
			r := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
			w := httptest.NewRecorder()
			Handler(b).ServeHTTP(w, r)
			if w.Code != tt.wantCode {
				t.Errorf("status = %d, want %d (body %q)", w.Code, tt.wantCode, w.Body.String())
			}
			if got := w.Header().Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type = %q, want application/json", got)
			}
			if got := w.Header().Get("Allow"); got != tt.wantAllow {
				t.Errorf("Allow = %q, want %q", got, tt.wantAllow)
			}
			got := w.Body.String()
			if tt.wantIn != "" {
				if !strings.Contains(got, tt.wantIn) {
					t.Errorf("body = %q, want it to contain %q", got, tt.wantIn)
				}
			} else if got != tt.wantBody {
				t.Errorf("body =\n%s\nwant\n%s", got, tt.wantBody)
			}
			if !reflect.DeepEqual(b.setCalls, tt.wantSet) {
				t.Errorf("SetMembers calls = %+v, want %+v", b.setCalls, tt.wantSet)
			}
		})
	}
}

// indent indents every line of a JSON document by two spaces, as an
// element of an indented array.
func indent(s string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString("  " + l)
		}
	}
	return b.String()
}

func TestSetMembersBodyLimit(t *testing.T) {
	b := newFakeBackend()
	// A body larger than maxBodyBytes is cut there, so it does not parse.
	body := `{"members": [` + strings.Repeat(`{"address": "10.0.0.1:80"},`, maxBodyBytes/26+1) + `{"address": "10.0.0.2:80"}]}`
	r := httptest.NewRequest("PUT", "/v1/upstreams/web", strings.NewReader(body))
	w := httptest.NewRecorder()
	Handler(b).ServeHTTP(w, r)
	if w.Code != http.StatusBadRequest {
		t.Errorf("status for a %d-byte body = %d, want 400", len(body), w.Code)
	}
	if len(b.setCalls) != 0 {
		t.Errorf("SetMembers called %d times, want 0", len(b.setCalls))
	}
}

func TestListen(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
		wantErr string // "" for success
	}{
		{name: "new", prepare: func(*testing.T, string) {}},
		{name: "stale socket", prepare: func(t *testing.T, path string) {
			l, err := net.Listen("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			l.(*net.UnixListener).SetUnlinkOnClose(false)
			l.Close()
			if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSocket == 0 {
				t.Fatalf("the stale socket was not left behind: %v", err)
			}
		}},
		{name: "regular file", prepare: func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("keep me"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, wantErr: "exists and is not a socket"},
		{name: "directory", prepare: func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, wantErr: "exists and is not a socket"},
		{name: "missing parent", prepare: func(t *testing.T, path string) {}, wantErr: "no such file or directory"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, string(rune('a'+i))+".sock")
			if tt.name == "missing parent" {
				path = filepath.Join(dir, "missing", "a.sock")
			}
			tt.prepare(t, path)
			before, _ := os.Lstat(path)
			l, err := Listen(path)
			if tt.wantErr != "" {
				if err == nil {
					l.Close()
					t.Fatalf("Listen(%s) succeeded, want an error containing %q", path, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("Listen error = %q, want it to contain %q", err, tt.wantErr)
				}
				if before != nil {
					after, err := os.Lstat(path)
					if err != nil || after.Mode() != before.Mode() || after.ModTime() != before.ModTime() {
						t.Errorf("Listen changed what was at %s: before %v, after %v (%v)", path, before.Mode(), after.Mode(), err)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Listen(%s): %v", path, err)
			}
			defer l.Close()
			fi, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode()&os.ModeSocket == 0 {
				t.Errorf("%s has mode %v, want a socket", path, fi.Mode())
			}
			if perm := fi.Mode().Perm(); perm != 0o600 {
				t.Errorf("%s has permissions %o, want 600", path, perm)
			}
			// The socket accepts connections.
			c, err := net.Dial("unix", path)
			if err != nil {
				t.Fatalf("dial %s: %v", path, err)
			}
			c.Close()
		})
	}
}

func TestNewServer(t *testing.T) {
	s := NewServer(newFakeBackend())
	if s.ReadHeaderTimeout <= 0 || s.IdleTimeout <= 0 {
		t.Errorf("ReadHeaderTimeout = %v, IdleTimeout = %v, want both set", s.ReadHeaderTimeout, s.IdleTimeout)
	}
	w := httptest.NewRecorder()
	s.Handler.ServeHTTP(w, httptest.NewRequest("GET", "/v1/status", nil))
	if w.Code != 200 {
		t.Errorf("GET /v1/status through NewServer's handler = %d, want 200", w.Code)
	}
}
