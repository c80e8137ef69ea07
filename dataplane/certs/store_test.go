package certs

import (
	"crypto/tls"
	"strings"
	"sync"
	"testing"
)

// namedCert is a distinct certificate whose identity the Store tests check.
func namedCert(t *testing.T, name string) *tls.Certificate {
	t.Helper()
	c, err := SelfSigned(name, name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// nameOf names a certificate the Store returned, "<nil>" for none.
func nameOf(c *tls.Certificate) string {
	if c == nil {
		return "<nil>"
	}
	return c.Leaf.Subject.CommonName
}

func newTestStore(t *testing.T, def *tls.Certificate, domains ...string) *Store {
	t.Helper()
	s := NewStore(def)
	for _, d := range domains {
		if err := s.Add(d, namedCert(t, d)); err != nil {
			t.Fatalf("Add(%q) = %v, want nil", d, err)
		}
	}
	return s
}

func TestStoreGet(t *testing.T) {
	s := newTestStore(t, namedCert(t, "default"),
		"www.example.com", "*.example.com", "a.b.example.com", "*.Apps.Example.com.")
	tests := []struct{ serverName, want string }{
		{"www.example.com", "www.example.com"},
		{"foo.example.com", "*.example.com"},
		{"a.b.example.com", "a.b.example.com"},
		{"x.b.example.com", "default"},
		{"example.com", "default"},
		{"WWW.Example.COM", "www.example.com"},
		{"www.example.com.", "www.example.com"},
		{"FOO.example.com.", "*.example.com"},
		{"x.apps.example.com", "*.Apps.Example.com."},
		{"y.x.apps.example.com", "default"},
		{".example.com", "default"},
		{"", "default"},
		{".", "default"},
		{"other.test", "default"},
	}
	for _, tc := range tests {
		t.Run("sni="+tc.serverName, func(t *testing.T) {
			if got := nameOf(s.Get(tc.serverName)); got != tc.want {
				t.Errorf("Get(%q) = %s, want %s", tc.serverName, got, tc.want)
			}
		})
	}
}

// TestStoreGetDeep checks the precedence of the "**." domains: exact, then
// the one-label wildcard, then the "**." domain of the longest suffix, then
// the default.
func TestStoreGetDeep(t *testing.T) {
	s := newTestStore(t, namedCert(t, "default"),
		"a.example.com", "*.example.com", "**.example.com", "**.B.example.com.", "*.c.b.example.com", "**.com")
	tests := []struct{ serverName, want string }{
		{"a.example.com", "a.example.com"},
		{"x.example.com", "*.example.com"},
		{"b.example.com", "*.example.com"},
		{"x.y.example.com", "**.example.com"},
		{"X.Y.Example.com.", "**.example.com"},
		{"x.b.example.com", "**.B.example.com."},
		{"x.y.z.b.example.com", "**.B.example.com."},
		{"x.c.b.example.com", "*.c.b.example.com"},
		{"x.y.c.b.example.com", "**.B.example.com."},
		{"example.com", "**.com"},
		{"x.y.other.com", "**.com"},
		// A "**." domain never serves the name after it, nor a name with
		// an empty label.
		{"com", "default"},
		{"x..example.com", "default"},
		{".example.com", "default"},
		{"example.org", "default"},
	}
	for _, tc := range tests {
		t.Run("sni="+tc.serverName, func(t *testing.T) {
			if got := nameOf(s.Get(tc.serverName)); got != tc.want {
				t.Errorf("Get(%q) = %s, want %s", tc.serverName, got, tc.want)
			}
		})
	}
}

func TestStoreNoDefault(t *testing.T) {
	s := newTestStore(t, nil, "www.example.com")
	tests := []struct {
		serverName, want string
		wantErr          bool
	}{
		{serverName: "www.example.com", want: "www.example.com"},
		{serverName: "other.example.com", want: "<nil>", wantErr: true},
		{serverName: "", want: "<nil>", wantErr: true},
	}
	for _, tc := range tests {
		t.Run("sni="+tc.serverName, func(t *testing.T) {
			if got := nameOf(s.Get(tc.serverName)); got != tc.want {
				t.Errorf("Get(%q) = %s, want %s", tc.serverName, got, tc.want)
			}
			got, err := s.GetCertificate(&tls.ClientHelloInfo{ServerName: tc.serverName})
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "no certificate for server name") {
					t.Errorf("GetCertificate(%q) = %s, %v, want an error", tc.serverName, nameOf(got), err)
				}
				return
			}
			if err != nil || nameOf(got) != tc.want {
				t.Errorf("GetCertificate(%q) = %s, %v, want %s, nil", tc.serverName, nameOf(got), err, tc.want)
			}
		})
	}
}

func TestStoreAdd(t *testing.T) {
	cert := namedCert(t, "x")
	tests := []struct {
		name, first, domain string
		cert                *tls.Certificate
		wantErr             string // substring; "" for success
	}{
		{name: "exact", domain: "www.example.com", cert: cert},
		{name: "wildcard", domain: "*.example.com", cert: cert},
		{name: "exact and wildcard of the same parent", first: "*.example.com", domain: "example.com", cert: cert},
		{name: "deep wildcard", domain: "**.example.com", cert: cert},
		{name: "deep wildcard beside the one-label wildcard", first: "*.example.com", domain: "**.example.com", cert: cert},
		{name: "deep wildcard beside the exact parent", first: "example.com", domain: "**.example.com", cert: cert},
		{name: "duplicate deep wildcard", first: "**.example.com", domain: "**.Example.com.", cert: cert, wantErr: "added twice"},
		{name: "double star alone", domain: "**", cert: cert, wantErr: "wildcard must be the whole left-most label"},
		{name: "double star dot", domain: "**.", cert: cert, wantErr: "wildcard"},
		{name: "triple star", domain: "***.example.com", cert: cert, wantErr: "wildcard"},
		{name: "inner double star", domain: "a.**.example.com", cert: cert, wantErr: "wildcard"},
		{name: "deep wildcard of a wildcard", domain: "**.*.example.com", cert: cert, wantErr: "wildcard"},
		{name: "deep wildcard with empty label", domain: "**.a..example.com", cert: cert, wantErr: "empty label"},
		{name: "duplicate", first: "www.example.com", domain: "www.example.com", cert: cert, wantErr: "added twice"},
		{name: "duplicate in other case", first: "www.example.com", domain: "WWW.example.com.", cert: cert, wantErr: "added twice"},
		{name: "duplicate wildcard", first: "*.example.com", domain: "*.EXAMPLE.com", cert: cert, wantErr: "added twice"},
		{name: "empty", domain: "", cert: cert, wantErr: "empty domain"},
		{name: "bare star", domain: "*", cert: cert, wantErr: "wildcard must be the whole left-most label"},
		{name: "star dot", domain: "*.", cert: cert, wantErr: "wildcard"},
		{name: "partial label wildcard", domain: "*foo.example.com", cert: cert, wantErr: "wildcard"},
		{name: "inner wildcard", domain: "a.*.example.com", cert: cert, wantErr: "wildcard"},
		{name: "double wildcard", domain: "*.*.example.com", cert: cert, wantErr: "wildcard"},
		{name: "empty label", domain: "a..example.com", cert: cert, wantErr: "empty label"},
		{name: "nil certificate", domain: "www.example.com", cert: nil, wantErr: "no certificate"},
		{name: "empty certificate", domain: "www.example.com", cert: &tls.Certificate{}, wantErr: "no certificate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore(nil)
			if tc.first != "" {
				if err := s.Add(tc.first, cert); err != nil {
					t.Fatalf("Add(%q) = %v, want nil", tc.first, err)
				}
			}
			err := s.Add(tc.domain, tc.cert)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Add(%q) = %v, want nil", tc.domain, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Add(%q) = %v, want an error holding %q", tc.domain, err, tc.wantErr)
			}
		})
	}
}

func TestStoreGetDoesNotAllocate(t *testing.T) {
	s := newTestStore(t, namedCert(t, "default"), "www.example.com", "*.example.com", "**.deep.example.com")
	for _, name := range []string{"www.example.com", "foo.example.com", "a.b.deep.example.com", "other.test", ""} {
		t.Run("sni="+name, func(t *testing.T) {
			if n := testing.AllocsPerRun(100, func() { s.Get(name) }); n != 0 {
				t.Errorf("Get(%q) allocates %v times, want 0", name, n)
			}
		})
	}
}

func TestStoreConcurrentGet(t *testing.T) {
	s := newTestStore(t, namedCert(t, "default"), "www.example.com", "*.example.com")
	names := map[string]string{"www.example.com": "www.example.com", "A.Example.com.": "*.example.com", "x.test": "default"}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				for sni, want := range names {
					if got := nameOf(s.Get(sni)); got != want {
						t.Errorf("Get(%q) = %s, want %s", sni, got, want)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}
