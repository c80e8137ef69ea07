package respond

import (
	"net/http/httptest"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

func TestServe(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		method      string
		wantType    string
		wantLength  string
		wantBody    string
	}{
		{name: "default content type", status: 200, body: "hello\n", method: "GET",
			wantType: DefaultContentType, wantLength: "6", wantBody: "hello\n"},
		{name: "given content type", status: 503, contentType: "application/json", body: `{"ok":false}`, method: "GET",
			wantType: "application/json", wantLength: "12", wantBody: `{"ok":false}`},
		{name: "empty body", status: 404, method: "GET",
			wantType: DefaultContentType, wantLength: "0", wantBody: ""},
		{name: "multibyte body length in bytes", status: 200, body: "héllo", method: "POST",
			wantType: DefaultContentType, wantLength: "6", wantBody: "héllo"},
		{name: "HEAD has no body", status: 200, body: "hello\n", method: "HEAD",
			wantType: DefaultContentType, wantLength: "6", wantBody: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := New(tt.status, tt.contentType, tt.body)
			w := httptest.NewRecorder()
			h.Serve(w, &exchange.Request{HTTP: httptest.NewRequest(tt.method, "/", nil)})
			if w.Code != tt.status {
				t.Errorf("status = %d, want %d", w.Code, tt.status)
			}
			if got := w.Header().Get("Content-Type"); got != tt.wantType {
				t.Errorf("Content-Type = %q, want %q", got, tt.wantType)
			}
			if got := w.Header().Get("Content-Length"); got != tt.wantLength {
				t.Errorf("Content-Length = %q, want %q", got, tt.wantLength)
			}
			if got := w.Body.String(); got != tt.wantBody {
				t.Errorf("body = %q, want %q", got, tt.wantBody)
			}
		})
	}
}

// TestServeTwice checks that serving does not consume the fixed body.
func TestServeTwice(t *testing.T) {
	h := New(200, "", "same")
	for i := range 2 {
		w := httptest.NewRecorder()
		h.Serve(w, &exchange.Request{HTTP: httptest.NewRequest("GET", "/", nil)})
		if got := w.Body.String(); got != "same" {
			t.Errorf("answer %d: body = %q, want %q", i+1, got, "same")
		}
	}
}
