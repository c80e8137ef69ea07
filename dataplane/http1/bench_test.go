package http1

import (
	"net/http"
	"testing"
)

// The heads of the benchmark's cells (test/bench): wrk's request, and
// nginx's answer with a static file.
var (
	benchRequestHead  = []byte("GET /1k HTTP/1.1\r\nHost: 127.0.0.1:18080\r\n\r\n")
	benchResponseHead = []byte("HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Mon, 30 Nov 2026 15:00:00 GMT\r\n" +
		"Content-Type: application/octet-stream\r\nContent-Length: 1024\r\nLast-Modified: Mon, 30 Nov 2026 14:00:00 GMT\r\n" +
		"Connection: keep-alive\r\nETag: \"692c5a40-400\"\r\nAccept-Ranges: bytes\r\n\r\n")
)

func BenchmarkParseSimple(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := parseSimple(benchRequestHead); !ok {
			b.Fatal("not taken")
		}
	}
}

func BenchmarkParseSimpleResponse(b *testing.B) {
	req, _ := http.NewRequest("GET", "http://member/1k", nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, ok := parseSimpleResponse(benchResponseHead, req); !ok {
			b.Fatal("not taken")
		}
	}
}
