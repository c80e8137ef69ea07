package bodylimit

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

const tooLargeBody = "Request Entity Too Large: the request body is larger than this route allows\n"

func TestServe(t *testing.T) {
	tests := []struct {
		name       string
		limit      int64
		method     string
		body       string
		length     int64 // ContentLength; -1 for a streamed body of unknown length
		wantNext   bool
		wantStatus int    // when next is not called
		wantBody   string // what next reads, when called
		wantErr    bool   // next's read fails with *http.MaxBytesError
	}{
		{name: "declared over the limit", limit: 4, method: "POST", body: "12345", length: 5,
			wantStatus: http.StatusRequestEntityTooLarge},
		{name: "declared over the limit HEAD", limit: 4, method: "HEAD", body: "12345", length: 5,
			wantStatus: http.StatusRequestEntityTooLarge},
		{name: "declared at the limit", limit: 5, method: "POST", body: "12345", length: 5,
			wantNext: true, wantBody: "12345"},
		{name: "declared under the limit", limit: 10, method: "POST", body: "123", length: 3,
			wantNext: true, wantBody: "123"},
		{name: "streamed under the limit", limit: 10, method: "POST", body: "123", length: -1,
			wantNext: true, wantBody: "123"},
		{name: "streamed over the limit", limit: 4, method: "POST", body: "123456789", length: -1,
			wantNext: true, wantErr: true},
		{name: "no limit", limit: 0, method: "POST", body: strings.Repeat("x", 1<<16), length: -1,
			wantNext: true, wantBody: strings.Repeat("x", 1<<16)},
		{name: "no limit declared", limit: 0, method: "POST", body: "12345", length: 5,
			wantNext: true, wantBody: "12345"},
		{name: "no body", limit: 1, method: "GET", length: 0,
			wantNext: true, wantBody: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/", nil)
			if tt.length != 0 {
				r.Body = io.NopCloser(strings.NewReader(tt.body))
			}
			r.ContentLength = tt.length
			called := false
			var read string
			var readErr error
			next := exchange.HandlerFunc(func(w http.ResponseWriter, x *exchange.Request) {
				called = true
				b, err := io.ReadAll(x.HTTP.Body)
				read, readErr = string(b), err
				w.WriteHeader(http.StatusNoContent)
			})
			w := httptest.NewRecorder()
			Handler{Limit: tt.limit, Next: next}.Serve(w, &exchange.Request{HTTP: r})
			if called != tt.wantNext {
				t.Fatalf("next called = %v, want %v", called, tt.wantNext)
			}
			if !called {
				if w.Code != tt.wantStatus {
					t.Errorf("status = %d, want %d", w.Code, tt.wantStatus)
				}
				if got := w.Header().Get("Connection"); got != "close" {
					t.Errorf("Connection = %q, want %q", got, "close")
				}
				wantBody := tooLargeBody
				if tt.method == http.MethodHead {
					wantBody = ""
				}
				if got := w.Body.String(); got != wantBody {
					t.Errorf("body = %q, want %q", got, wantBody)
				}
				return
			}
			if tt.wantErr {
				var mbe *http.MaxBytesError
				if !errors.As(readErr, &mbe) {
					t.Fatalf("read error = %v (%T), want *http.MaxBytesError", readErr, readErr)
				}
				if mbe.Limit != tt.limit {
					t.Errorf("MaxBytesError.Limit = %d, want %d", mbe.Limit, tt.limit)
				}
				if int64(len(read)) > tt.limit {
					t.Errorf("next read %d bytes, want at most the limit %d", len(read), tt.limit)
				}
				return
			}
			if readErr != nil {
				t.Errorf("read error = %v, want none", readErr)
			}
			if read != tt.wantBody {
				t.Errorf("next read %d bytes, want %d", len(read), len(tt.wantBody))
			}
		})
	}
}

func TestTooLarge(t *testing.T) {
	w := httptest.NewRecorder()
	TooLarge(w, httptest.NewRequest("PUT", "/", nil))
	if w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("status = %d, want 413", w.Code)
	}
	if got, want := w.Header().Get("Content-Type"), "text/plain; charset=utf-8"; got != want {
		t.Errorf("Content-Type = %q, want %q", got, want)
	}
	if got := w.Body.String(); got != tooLargeBody {
		t.Errorf("body = %q, want %q", got, tooLargeBody)
	}
}
