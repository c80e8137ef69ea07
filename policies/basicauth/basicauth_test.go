package basicauth

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/GehirnInc/crypt/apr1_crypt"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

const (
	testRealm     = "Ramjet test"
	testChallenge = `Basic realm="Ramjet test"`
	wantBody      = "Unauthorized: this route requires a valid user and password\n"
)

func basic(userPass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(userPass))
}

// recorder is a next handler that records whether it was called and the
// Authorization headers it saw.
type recorder struct {
	called bool
	auth   []string
}

func (n *recorder) Serve(w http.ResponseWriter, x *exchange.Request) {
	n.called = true
	n.auth = x.HTTP.Header.Values("Authorization")
	w.WriteHeader(http.StatusNoContent)
}

// serve sends one request with the Authorization values given (none when
// nil) and returns the answer.
func serve(h *Handler, method string, auth []string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "/", nil)
	for _, v := range auth {
		r.Header.Add("Authorization", v)
	}
	w := httptest.NewRecorder()
	h.Serve(w, &exchange.Request{HTTP: r})
	return w
}

// checkRefused checks a 401 answer with the challenge.
func checkRefused(t *testing.T, w *httptest.ResponseRecorder, method string) {
	t.Helper()
	if w.Code != http.StatusUnauthorized {
		t.Errorf("status = %d, want %d", w.Code, http.StatusUnauthorized)
	}
	if got := w.Header().Values("WWW-Authenticate"); len(got) != 1 || got[0] != testChallenge {
		t.Errorf("WWW-Authenticate = %q, want [%q]", got, testChallenge)
	}
	if got, want := w.Header().Get("Content-Type"), "text/plain; charset=utf-8"; got != want {
		t.Errorf("Content-Type = %q, want %q", got, want)
	}
	want := wantBody
	if method == http.MethodHead {
		want = ""
	}
	if got := w.Body.String(); got != want {
		t.Errorf("body = %q, want %q", got, want)
	}
}

func newTestHandler(t testing.TB, accounts []account, cache *Cache) (*Handler, *recorder) {
	t.Helper()
	f, err := Parse("htpasswd", htpasswd(accounts))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	next := &recorder{}
	return New(f, testRealm, cache, nil, next), next
}

func TestServeValid(t *testing.T) {
	for _, a := range accounts(t) {
		t.Run(a.kind, func(t *testing.T) {
			h, next := newTestHandler(t, []account{a}, NewCache(16))
			w := serve(h, http.MethodGet, []string{basic(a.kind + ":" + a.password)})
			if !next.called {
				t.Fatalf("next called = false, want true (status %d)", w.Code)
			}
			if len(next.auth) != 0 {
				t.Errorf("next saw Authorization %q, want none", next.auth)
			}
			if w.Code != http.StatusNoContent {
				t.Errorf("status = %d, want %d", w.Code, http.StatusNoContent)
			}
			if got := w.Header().Get("WWW-Authenticate"); got != "" {
				t.Errorf("WWW-Authenticate = %q, want none", got)
			}
		})
	}
}

func TestServeHeaderForms(t *testing.T) {
	accounts := []account{
		{kind: "alice", password: "secret", hash: vector(t, "apr1-vector")},
		// "carol:s?>?>" encodes with '+' in the standard alphabet, '-' in
		// the URL one.
		{kind: "carol", password: "s?>?>", hash: generate(t, apr1_crypt.New().Generate, "s?>?>", "")},
		// dave's hash is of the empty password, which is refused anyway.
		{kind: "dave", password: "", hash: generate(t, apr1_crypt.New().Generate, "", "")},
	}
	token := base64.StdEncoding.EncodeToString([]byte("alice:secret")) // ends with "="
	tests := []struct {
		name     string
		auth     []string
		wantNext bool
	}{
		{name: "canonical", auth: []string{"Basic " + token}, wantNext: true},
		{name: "lower-case scheme", auth: []string{"basic " + token}, wantNext: true},
		{name: "upper-case scheme", auth: []string{"BASIC " + token}, wantNext: true},
		{name: "extra spaces", auth: []string{"  Basic    " + token + "   "}, wantNext: true},
		{name: "tab", auth: []string{"Basic\t" + token}, wantNext: true},
		{name: "unpadded base64", auth: []string{"Basic " + strings.TrimRight(token, "=")}, wantNext: true},
		{name: "no header", auth: nil},
		{name: "empty header", auth: []string{""}},
		{name: "scheme only", auth: []string{"Basic"}},
		{name: "scheme and spaces", auth: []string{"Basic   "}},
		{name: "bearer", auth: []string{"Bearer x"}},
		{name: "bearer with basic token", auth: []string{"Bearer " + token}},
		{name: "scheme prefix", auth: []string{"Basicx " + token}},
		{name: "no space after scheme", auth: []string{"Basic" + token}},
		{name: "malformed base64", auth: []string{"Basic !!!not-base64!!!"}},
		{name: "bad padding", auth: []string{"Basic " + token + "="}},
		{name: "standard base64 alphabet", auth: []string{basic("carol:s?>?>")}, wantNext: true},
		{name: "URL base64 alphabet", auth: []string{"Basic " + base64.URLEncoding.EncodeToString([]byte("carol:s?>?>"))}},
		{name: "newline inside base64", auth: []string{"Basic " + token[:4] + "\n" + token[4:]}},
		{name: "space inside base64", auth: []string{"Basic " + token[:4] + " " + token[4:]}},
		{name: "missing colon", auth: []string{basic("alicesecret")}},
		{name: "empty password", auth: []string{basic("alice:")}},
		{name: "empty password matching the hash", auth: []string{basic("dave:")}},
		{name: "empty user", auth: []string{basic(":secret")}},
		{name: "wrong password", auth: []string{basic("alice:secreT")}},
		{name: "password with a suffix", auth: []string{basic("alice:secret ")}},
		{name: "unknown user", auth: []string{basic("mallory:secret")}},
		{name: "user differs in case", auth: []string{basic("Alice:secret")}},
		{name: "NUL in user", auth: []string{basic("alice\x00:secret")}},
		{name: "two headers", auth: []string{"Basic " + token, "Basic " + token}},
		{name: "two schemes in one header", auth: []string{"Basic " + token + ", Basic " + token}},
		{name: "too long", auth: []string{basic("alice:" + strings.Repeat("x", MaxCredentialBytes))}},
	}
	for _, tt := range tests {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			t.Run(tt.name+"/"+method, func(t *testing.T) {
				h, next := newTestHandler(t, accounts, NewCache(16))
				w := serve(h, method, tt.auth)
				if next.called != tt.wantNext {
					t.Fatalf("next called = %v, want %v (status %d)", next.called, tt.wantNext, w.Code)
				}
				if !tt.wantNext {
					checkRefused(t, w, method)
					return
				}
				if len(next.auth) != 0 {
					t.Errorf("next saw Authorization %q, want none", next.auth)
				}
			})
		}
	}
}

func TestChallenge(t *testing.T) {
	tests := []struct {
		name, realm, want string
	}{
		{name: "plain", realm: "Ramjet test", want: `Basic realm="Ramjet test"`},
		{name: "empty", realm: "", want: `Basic realm=""`},
		{name: "quote and backslash escaped", realm: `a"b\c`, want: `Basic realm="a\"b\\c"`},
		{name: "control characters dropped", realm: "a\r\nb\x00\x7fc", want: `Basic realm="abc"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := challenge(tt.realm); got != tt.want {
				t.Errorf("challenge(%q) = %q, want %q", tt.realm, got, tt.want)
			}
		})
	}
}

func TestNewPanicsOnNil(t *testing.T) {
	f, err := Parse("htpasswd", htpasswd(vectors[:1]))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		f    *File
		next exchange.Handler
	}{
		{name: "nil file", next: &recorder{}},
		{name: "nil next", f: f},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("New did not panic, want a panic")
				}
			}()
			New(tt.f, "", nil, nil, tt.next)
		})
	}
}

// FuzzServe sends arbitrary Authorization values: Serve must not panic,
// must answer either the next handler's 204 (without Authorization) or a
// 401 with the fixed challenge.
func FuzzServe(f *testing.F) {
	accounts := []account{
		{kind: "alice", password: "secret", hash: vector(f, "apr1-vector")},
		{kind: "bob", password: "secret", hash: vector(f, "bcrypt-2b-vector")},
	}
	for _, seed := range []string{
		"", "Basic", "Basic ", basic("alice:secret"), basic("bob:secret"), basic("alice:wrong"),
		basic("alice"), basic(":"), "basic YWxpY2U6c2VjcmV0", "Basic YWxpY2U6c2VjcmV0=", "Bearer x",
		"Basic \x00\xff", "Basic ====", "Basic\tYQ", "Basic " + strings.Repeat("A", 2000),
	} {
		f.Add(seed)
	}
	h, next := newTestHandler(f, accounts, NewCache(4))
	f.Fuzz(func(t *testing.T, auth string) {
		next.called, next.auth = false, nil
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header["Authorization"] = []string{auth}
		w := httptest.NewRecorder()
		h.Serve(w, &exchange.Request{HTTP: r})
		if next.called {
			if len(next.auth) != 0 {
				t.Fatalf("next saw Authorization %q, want none", next.auth)
			}
			return
		}
		if w.Code != http.StatusUnauthorized {
			t.Fatalf("status = %d, want 401", w.Code)
		}
		if got := w.Header().Get("WWW-Authenticate"); got != testChallenge {
			t.Fatalf("WWW-Authenticate = %q, want %q", got, testChallenge)
		}
	})
}

// countVerifications makes h count its hash verifications.
func countVerifications(h *Handler) *atomic.Int64 {
	var n atomic.Int64
	h.verified = func() { n.Add(1) }
	return &n
}

// TestLimiter checks that verifications beyond the limiter's turns wait,
// and are answered 503 when no turn comes within its patience; cached
// credentials never wait.
func TestLimiter(t *testing.T) {
	l := NewLimiter(1, 50*time.Millisecond)
	if !l.acquire(context.Background()) {
		t.Fatal("the first turn was refused")
	}
	start := time.Now()
	if l.acquire(context.Background()) {
		t.Fatal("a second turn was granted while the first is held")
	}
	if waited := time.Since(start); waited < 40*time.Millisecond {
		t.Errorf("refused after %v, want after the 50ms patience", waited)
	}
	done := make(chan bool)
	go func() { done <- l.acquire(context.Background()) }()
	time.Sleep(10 * time.Millisecond)
	l.release()
	if !<-done {
		t.Error("a waiting turn was not granted when the first was released")
	}
	l.release()

	// Through the handler: the only turn is taken, so a miss gets 503, and
	// a request whose credentials are cached passes.
	f, err := Parse("htpasswd", []byte("alice:"+generate(t, apr1_crypt.New().Generate, "secret", "")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	cache := NewCache(8)
	next := exchange.HandlerFunc(func(w http.ResponseWriter, x *exchange.Request) { w.WriteHeader(http.StatusNoContent) })
	h := New(f, "r", cache, l, next)
	serve := func() int {
		r := httptest.NewRequest("GET", "/", nil)
		r.SetBasicAuth("alice", "secret")
		w := httptest.NewRecorder()
		h.Serve(w, &exchange.Request{HTTP: r})
		return w.Code
	}
	if code := serve(); code != http.StatusNoContent {
		t.Fatalf("first request: %d, want 204", code)
	}
	l.acquire(context.Background())
	defer l.release()
	if code := serve(); code != http.StatusNoContent {
		t.Errorf("cached credentials with every turn taken: %d, want 204", code)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.SetBasicAuth("alice", "wrong")
	w := httptest.NewRecorder()
	h.Serve(w, &exchange.Request{HTTP: r})
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Errorf("a miss with every turn taken: %d, want 503 with Retry-After", w.Code)
	}
}
