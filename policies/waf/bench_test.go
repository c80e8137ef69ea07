package waf

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// BenchmarkCleanRequest measures the CPU and allocations the policy adds
// to a clean GET with browser-like headers: the recommended configuration
// alone, and with the Core Rule Set, both with SecRuleEngine On. The
// member is a handler that answers at once.
//
//	go test -run '^$' -bench CleanRequest -benchmem ./policies/waf/
func BenchmarkCleanRequest(b *testing.B) {
	for _, bc := range []struct {
		name string
		cfg  *config.WAF
	}{
		{"recommended", &config.WAF{Directives: "SecRuleEngine On\n"}},
		{"crs", &config.WAF{CoreRules: true, Directives: "SecRuleEngine On\n"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			next := exchange.HandlerFunc(func(w http.ResponseWriter, x *exchange.Request) { w.WriteHeader(http.StatusOK) })
			h := New(engineFor(b, bc.cfg), bc.cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), next)
			r := httptest.NewRequest("GET", "http://shop.example.com/products/42?sort=price&page=2", nil)
			r.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
			r.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
			r.Header.Set("Accept-Language", "en-GB,en;q=0.5")
			r.Header.Set("Accept-Encoding", "gzip, deflate, br")
			r.Header.Set("Cookie", "session=3f2a9c1e7b; theme=dark")
			x := &exchange.Request{HTTP: r, Path: "/products/42", ClientIP: netip.MustParseAddr("198.18.0.10"), Scheme: "http", Port: "80"}
			w := httptest.NewRecorder()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				h.Serve(w, x)
			}
			if w.Code != http.StatusOK {
				b.Fatalf("status %d", w.Code)
			}
		})
	}
}
