package http1

import (
	"bufio"
	"io"
	"net/http"
	"net/textproto"

	"golang.org/x/net/http/httpguts"
	"strings"
	"testing"
)

// TestParseSimpleResponse compares the responses read in place with what
// http.ReadResponse makes of the same bytes, and lists those left to it.
func TestParseSimpleResponse(t *testing.T) {
	tests := []struct {
		name, method, raw string
		simple            bool
	}{
		{"length", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello", true},
		{"repeated fields", "GET", "HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nETag: \"x\"\r\nContent-Length: 2\r\n\r\nok", true},
		{"equal lengths", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", true},
		{"empty body", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true},
		{"close", "GET", "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 4\r\n\r\ndown", true},
		{"close among Connection fields", "GET", "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", true},
		{"Pragma", "GET", "HTTP/1.1 200 OK\r\nPragma: no-cache\r\nContent-Length: 2\r\n\r\nok", true},
		{"more fields than the stack holds", "GET", "HTTP/1.1 200 OK\r\nX-F0: 0\r\nX-F1: 1\r\nX-F2: 2\r\nX-F3: 3\r\nX-F4: 4\r\nX-F5: 5\r\nX-F6: 6\r\nX-F7: 7\r\nX-F8: 8\r\nX-F9: 9\r\nX-F10: 10\r\nX-F11: 11\r\nX-F12: 12\r\nX-F13: 13\r\nX-F14: 14\r\nX-F15: 15\r\nX-F16: 16\r\nX-F17: 17\r\nX-F18: 18\r\nX-F19: 19\r\nX-F3: again\r\nx-f19: again\r\nContent-Length: 2\r\n\r\nok", true},
		{"bare LF", "GET", "HTTP/1.1 200 OK\r\nA: 1\nB: 2\r\nContent-Length: 2\r\n\r\nok", false},
		{"no reason", "GET", "HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n", true},
		{"unknown reason", "GET", "HTTP/1.1 299 Fine Enough\r\nContent-Length: 0\r\n\r\n", true},
		{"HEAD with length", "HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 1024\r\n\r\n", true},
		{"HEAD without length", "HEAD", "HTTP/1.1 200 OK\r\n\r\n", true},
		{"no content", "GET", "HTTP/1.1 204 No Content\r\n\r\n", true},
		{"not modified with length", "GET", "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", true},
		{"pragma", "GET", "HTTP/1.1 200 OK\r\nPragma: no-cache\r\nContent-Length: 0\r\n\r\n", true},
		{"lengths written differently", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 02\r\n\r\nok", false},
		{"chunked", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", false},
		{"until close", "GET", "HTTP/1.1 200 OK\r\n\r\nall of it", false},
		{"HTTP/1.0", "GET", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", false},
		{"informational", "GET", "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n", false},
		{"differing lengths", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", false},
		{"signed length", "GET", "HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok", false},
		{"space before colon", "GET", "HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok", false},
		{"control byte", "GET", "HTTP/1.1 200 OK\r\nX: a\x00b\r\nContent-Length: 2\r\n\r\nok", false},
		{"bare LF", "GET", "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", false},
		{"incomplete", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n", false},
		{"bad code", "GET", "HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &http.Request{Method: tt.method}
			resp, length, size, ok := parseSimpleResponse([]byte(tt.raw), req)
			if ok != tt.simple {
				t.Fatalf("read in place %v, want %v", ok, tt.simple)
			}
			if !ok {
				return
			}
			want, err := http.ReadResponse(bufio.NewReader(strings.NewReader(tt.raw)), req)
			if err != nil {
				t.Fatalf("net/http: %v", err)
			}
			wantBody, _ := io.ReadAll(want.Body)
			if got := tt.raw[size : size+int(length)]; got != string(wantBody) {
				t.Errorf("body %q, want %q", got, wantBody)
			}
			if resp.Status != want.Status || resp.StatusCode != want.StatusCode || resp.Proto != want.Proto ||
				resp.ContentLength != want.ContentLength || resp.Close != want.Close || resp.Request != req {
				t.Errorf("got %q %d %s length %d close %v, want %q %d %s length %d close %v", resp.Status, resp.StatusCode, resp.Proto,
					resp.ContentLength, resp.Close, want.Status, want.StatusCode, want.Proto, want.ContentLength, want.Close)
			}
			if !sameHeader(resp.Header, want.Header) {
				t.Errorf("header %v, want %v", resp.Header, want.Header)
			}
		})
	}
}

func TestFieldName(t *testing.T) {
	names := []string{"ETag", "etag", "content-type", "CONTENT-LENGTH", "x-custom-thing", "X-Custom",
		"www-authenticate", "a", "A-", "-a", "x--y", "x-request-id-that-is-longer-than-32-bytes",
		"", "a b", " Host", "Host ", "x(y)", "na\xffme", "tab\tname", "x_y", "!#$%&'*+-.^_`|~09azAZ"}
	for n := range commonNames {
		names = append(names, n, strings.ToLower(n), strings.ToUpper(n))
	}
	for _, name := range names {
		got, ok := fieldName(name)
		if valid := httpguts.ValidHeaderFieldName(name); ok != valid {
			t.Errorf("fieldName(%q) ok = %v, want %v", name, ok, valid)
			continue
		}
		if want := textproto.CanonicalMIMEHeaderKey(name); ok && got != want {
			t.Errorf("fieldName(%q) = %q, want %q", name, got, want)
		}
	}
	for n, v := range commonNames {
		if n != v || textproto.CanonicalMIMEHeaderKey(n) != n {
			t.Errorf("common name %q is not canonical", n)
		}
	}
	for _, name := range []string{"ETag", "content-type", "X-Forwarded-For"} {
		if allocs := testing.AllocsPerRun(10, func() { fieldName(name) }); allocs != 0 {
			t.Errorf("fieldName(%q) allocated %v times, want none", name, allocs)
		}
	}
}
