package daemon

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// benchDaemon serves app.test from one member answering 1 KiB.
func benchDaemon(b *testing.B) *testDaemon {
	body := strings.Repeat("x", 1024)
	member := startBackend(b, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, body)
	})
	return startDaemon(b, poolConfig, map[string]any{"Members": []string{member.addr}})
}

// BenchmarkProxy measures one proxied GET of a 1 KiB answer through
// loopback: client → ramjetd → member, keep-alive on both sides. ns/op is
// the round trip of the three in one process; allocs/op counts all three.
// The "handler" case calls ramjetd's handler directly, so its allocations
// are ramjetd's own (routing, forwarding, the transport to the member).
func BenchmarkProxy(b *testing.B) {
	td := benchDaemon(b)
	b.Run("loopback", func(b *testing.B) {
		c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}, Timeout: 10 * time.Second}
		req, _ := http.NewRequest(http.MethodGet, td.url("http")+"/bench", nil)
		req.Host = "app.test"
		b.ReportAllocs()
		for b.Loop() {
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	b.Run("handler", func(b *testing.B) { benchHandler(b, td.Daemon) })
}

// benchHandler serves GET app.test/bench through d's HTTP listener
// handler, without a socket, and wants 200 for each.
func benchHandler(b *testing.B, d *Daemon) {
	h := &entry{d: d, listener: "http", port: "80"}
	w := &discardWriter{header: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		req := &http.Request{
			Method: http.MethodGet, Host: "app.test", RemoteAddr: "127.0.0.1:40000",
			URL: benchURL, Header: http.Header{"User-Agent": {"bench"}, "Accept": {"*/*"}},
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Body: http.NoBody,
		}
		clear(w.header)
		h.ServeHTTP(w, req)
		if w.status != 200 {
			b.Fatalf("status %d", w.status)
		}
	}
}

var benchURL = mustParseURL("/bench")

// discardWriter is a ResponseWriter that keeps nothing but the status.
type discardWriter struct {
	header http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(code int)        { w.status = code }
