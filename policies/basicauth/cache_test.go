package basicauth

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/GehirnInc/crypt/apr1_crypt"
	"github.com/GehirnInc/crypt/sha256_crypt"
	"github.com/GehirnInc/crypt/sha512_crypt"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
	"golang.org/x/crypto/bcrypt"
)

func TestCacheSkipsVerification(t *testing.T) {
	type step struct {
		userPass     string
		wantNext     bool
		wantVerified int64 // verifications so far
	}
	for _, a := range accounts(t) {
		t.Run(a.kind, func(t *testing.T) {
			h, next := newTestHandler(t, []account{a}, NewCache(16))
			n := countVerifications(h)
			good := a.kind + ":" + a.password
			bad := a.kind + ":" + a.password + "!"
			steps := []step{
				{userPass: bad, wantNext: false, wantVerified: 1},   // a miss that fails is not cached
				{userPass: bad, wantNext: false, wantVerified: 2},   // so it verifies again
				{userPass: good, wantNext: true, wantVerified: 3},   // a miss that verifies is cached
				{userPass: good, wantNext: true, wantVerified: 3},   // a hit does not verify
				{userPass: good, wantNext: true, wantVerified: 3},   // nor does the next one
				{userPass: bad, wantNext: false, wantVerified: 4},   // a wrong password is not served from the cache
				{userPass: "nobody:" + a.password, wantVerified: 4}, // unknown users are not verified
			}
			for i, s := range steps {
				next.called = false
				w := serve(h, http.MethodGet, []string{basic(s.userPass)})
				if next.called != s.wantNext {
					t.Errorf("step %d: next called = %v, want %v (status %d)", i, next.called, s.wantNext, w.Code)
				}
				if got := n.Load(); got != s.wantVerified {
					t.Errorf("step %d: verifications = %d, want %d", i, got, s.wantVerified)
				}
			}
		})
	}
}

func TestNoCacheVerifiesEachTime(t *testing.T) {
	for _, tt := range []struct {
		name  string
		cache *Cache
	}{
		{name: "nil cache", cache: nil},
		{name: "size 0", cache: NewCache(0)},
		{name: "negative size", cache: NewCache(-1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := account{kind: "alice", password: "secret", hash: vector(t, "apr1-vector")}
			h, next := newTestHandler(t, []account{a}, tt.cache)
			n := countVerifications(h)
			for i := 1; i <= 3; i++ {
				next.called = false
				serve(h, http.MethodGet, []string{basic("alice:secret")})
				if !next.called {
					t.Fatalf("request %d: next called = false, want true", i)
				}
				if got := n.Load(); got != int64(i) {
					t.Errorf("request %d: verifications = %d, want %d", i, got, i)
				}
			}
		})
	}
}

func TestCredentialLength(t *testing.T) {
	long := strings.Repeat("p", MaxCredentialBytes-len("alice:"))
	hash := generate(t, apr1_crypt.New().Generate, long, "")
	h, next := newTestHandler(t, []account{{kind: "alice", password: long, hash: hash}}, nil)
	n := countVerifications(h)
	tests := []struct {
		name         string
		userPass     string
		wantNext     bool
		wantVerified int64
	}{
		{name: "at the limit", userPass: "alice:" + long, wantNext: true, wantVerified: 1},
		{name: "over the limit is refused unverified", userPass: "alice:" + long + "p", wantVerified: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next.called = false
			w := serve(h, http.MethodGet, []string{basic(tt.userPass)})
			if next.called != tt.wantNext {
				t.Errorf("next called = %v, want %v (status %d)", next.called, tt.wantNext, w.Code)
			}
			if got := n.Load(); got != tt.wantVerified {
				t.Errorf("verifications = %d, want %d", got, tt.wantVerified)
			}
		})
	}
}

// TestCacheScopedToFile shares one cache, by mistake, between two files
// where alice has different passwords: the old password must not let her
// in under the new file.
func TestCacheScopedToFile(t *testing.T) {
	cache := NewCache(16)
	oldFile, _ := newTestHandler(t, []account{{kind: "alice", password: "secret", hash: vector(t, "apr1-vector")}}, cache)
	newFile, next := newTestHandler(t, []account{{kind: "alice", password: "other", hash: generate(t, apr1_crypt.New().Generate, "other", "")}}, cache)
	if w := serve(oldFile, http.MethodGet, []string{basic("alice:secret")}); w.Code != http.StatusNoContent {
		t.Fatalf("old file: status = %d, want 204", w.Code)
	}
	w := serve(newFile, http.MethodGet, []string{basic("alice:secret")})
	if next.called {
		t.Fatalf("new file with the old password: next called = true, want false")
	}
	checkRefused(t, w, http.MethodGet)
}

func TestCacheBound(t *testing.T) {
	const size = 8
	tests := []struct {
		name    string
		inserts int
	}{
		{name: "below the bound", inserts: size - 1},
		{name: "at the bound", inserts: size},
		{name: "many times the bound", inserts: 50 * size},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCache(size)
			var digest [32]byte
			var last cacheKey
			for i := range tt.inserts {
				last = c.key(digest, []byte(fmt.Sprint("user", i)), []byte("pw"))
				c.add(last)
				if got := c.len(); got > size {
					t.Fatalf("after %d inserts: %d entries, want at most %d", i+1, got, size)
				}
			}
			if !c.has(last) {
				t.Errorf("last key inserted is missing, want present")
			}
			want := tt.inserts % size
			if want == 0 {
				want = size
			}
			if got := c.len(); got != want {
				t.Errorf("entries = %d, want %d (a fresh map each %d inserts)", got, want, size)
			}
		})
	}
}

func TestCacheBoundThroughServe(t *testing.T) {
	const users, size = 40, 5
	var accounts []account
	for i := range users {
		pw := fmt.Sprint("pw", i)
		accounts = append(accounts, account{kind: fmt.Sprint("user", i), password: pw, hash: generate(t, apr1_crypt.New().Generate, pw, "")})
	}
	cache := NewCache(size)
	h, next := newTestHandler(t, accounts, cache)
	n := countVerifications(h)
	for i, a := range accounts {
		next.called = false
		serve(h, http.MethodGet, []string{basic(a.kind + ":" + a.password)})
		if !next.called {
			t.Fatalf("%s: next called = false, want true", a.kind)
		}
		if got := cache.len(); got > size {
			t.Fatalf("after %d users: %d entries, want at most %d", i+1, got, size)
		}
	}
	if got := n.Load(); got != users {
		t.Errorf("verifications = %d, want %d", got, users)
	}
}

func TestCacheKeyDistinct(t *testing.T) {
	c := NewCache(4)
	var d1, d2 [32]byte
	d2[0] = 1
	base := c.key(d1, []byte("alice"), []byte("secret"))
	tests := []struct {
		name string
		key  cacheKey
	}{
		{name: "other password", key: c.key(d1, []byte("alice"), []byte("secreT"))},
		{name: "other user", key: c.key(d1, []byte("alicf"), []byte("secret"))},
		{name: "other file", key: c.key(d2, []byte("alice"), []byte("secret"))},
		{name: "other cache", key: NewCache(4).key(d1, []byte("alice"), []byte("secret"))},
		{name: "split moved", key: c.key(d1, []byte("alices"), []byte("ecret"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.key == base {
				t.Errorf("key = %x, same as alice/secret's, want different", tt.key)
			}
		})
	}
	if again := c.key(d1, []byte("alice"), []byte("secret")); again != base {
		t.Errorf("same input: key = %x, want %x", again, base)
	}
}

// TestConcurrent runs many goroutines against one handler whose cache is
// smaller than its users, so generations turn over while requests run;
// run it with -race.
func TestConcurrent(t *testing.T) {
	const users, goroutines, rounds = 12, 16, 40
	var accounts []account
	for i := range users {
		pw := fmt.Sprint("pw", i)
		accounts = append(accounts, account{kind: fmt.Sprint("user", i), password: pw, hash: generate(t, apr1_crypt.New().Generate, pw, "")})
	}
	f, err := Parse("htpasswd", htpasswd(accounts))
	if err != nil {
		t.Fatal(err)
	}
	cache := NewCache(5)
	next := exchange.HandlerFunc(func(w http.ResponseWriter, x *exchange.Request) {
		if len(x.HTTP.Header.Values("Authorization")) != 0 {
			t.Errorf("next saw Authorization, want none")
		}
		w.WriteHeader(http.StatusNoContent)
	})
	h := New(f, testRealm, cache, nil, next)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for r := range rounds {
				a := accounts[(g+r)%users]
				good := r%3 != 0
				pw := a.password
				if !good {
					pw += "x"
				}
				w := serve(h, http.MethodGet, []string{basic(a.kind + ":" + pw)})
				want := http.StatusUnauthorized
				if good {
					want = http.StatusNoContent
				}
				if w.Code != want {
					t.Errorf("%s good=%v: status = %d, want %d", a.kind, good, w.Code, want)
				}
			}
		})
	}
	wg.Wait()
	if got := cache.len(); got > 5 {
		t.Errorf("entries = %d, want at most 5", got)
	}
}

// BenchmarkBasicAuth compares a request that verifies the hash (uncached)
// with one served from the cache.
func BenchmarkBasicAuth(b *testing.B) {
	kinds := []struct {
		name string
		hash func(password string) string
	}{
		{name: "bcrypt-cost-10", hash: func(pw string) string { return hashBcrypt(b, pw, bcrypt.DefaultCost) }},
		{name: "sha512-crypt", hash: func(pw string) string {
			return generate(b, sha512_crypt.New().Generate, pw, "")
		}},
		{name: "sha256-crypt", hash: func(pw string) string {
			return generate(b, sha256_crypt.New().Generate, pw, "")
		}},
		{name: "apr1", hash: func(pw string) string { return generate(b, apr1_crypt.New().Generate, pw, "") }},
	}
	for _, k := range kinds {
		a := account{kind: "alice", password: "correct horse battery staple", hash: k.hash("correct horse battery staple")}
		for _, mode := range []struct {
			name  string
			cache *Cache
		}{{name: "uncached"}, {name: "cached", cache: NewCache(1024)}} {
			b.Run(k.name+"/"+mode.name, func(b *testing.B) {
				benchServe(b, a, mode.cache)
			})
		}
	}
}

func benchServe(b *testing.B, a account, cache *Cache) {
	f, err := Parse("htpasswd", htpasswd([]account{a}))
	if err != nil {
		b.Fatal(err)
	}
	h := New(f, testRealm, cache, nil, exchange.HandlerFunc(func(w http.ResponseWriter, x *exchange.Request) {}))
	r, err := http.NewRequest(http.MethodGet, "/", nil)
	if err != nil {
		b.Fatal(err)
	}
	x := &exchange.Request{HTTP: r}
	auth := []string{basic(a.kind + ":" + a.password)}
	w := nopWriter{}
	b.ReportAllocs()
	for b.Loop() {
		r.Header["Authorization"] = auth
		h.Serve(w, x)
		if _, still := r.Header["Authorization"]; still {
			b.Fatal("request refused")
		}
	}
}

// nopWriter is a ResponseWriter that drops everything.
type nopWriter struct{}

func (nopWriter) Header() http.Header         { return http.Header{} }
func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriter) WriteHeader(int)             {}
