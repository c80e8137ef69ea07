package redirect

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

func TestServe(t *testing.T) {
	const target = "https://example.org/new?x=1"
	tests := []struct {
		name     string
		code     int
		wantCode int
	}{
		{name: "default", code: 0, wantCode: http.StatusMovedPermanently},
		{name: "301", code: 301, wantCode: 301},
		{name: "302", code: 302, wantCode: 302},
		{name: "303", code: 303, wantCode: 303},
		{name: "307", code: 307, wantCode: 307},
		{name: "308", code: 308, wantCode: 308},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := New(target, tt.code)
			if h.Code != tt.wantCode {
				t.Errorf("New(%q, %d).Code = %d, want %d", target, tt.code, h.Code, tt.wantCode)
			}
			w := httptest.NewRecorder()
			h.Serve(w, &exchange.Request{HTTP: httptest.NewRequest(http.MethodGet, "/old?y=2", nil)})
			if w.Code != tt.wantCode {
				t.Errorf("status = %d, want %d", w.Code, tt.wantCode)
			}
			if got := w.Header().Get("Location"); got != target {
				t.Errorf("Location = %q, want %q (used literally, without the request's query)", got, target)
			}
			if w.Body.Len() != 0 {
				t.Errorf("body = %q, want none", w.Body.String())
			}
		})
	}
}
