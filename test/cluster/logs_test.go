//go:build conformance

package cluster

import (
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

func TestServeLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.cri.log")
	data := "2026-01-02T10:00:00.5Z stdout F one\n" +
		"2026-01-02T10:00:01Z stderr P tw\n" +
		"2026-01-02T10:00:01.1Z stderr F o\n" +
		"2026-01-02T10:00:02Z stdout F three\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ query, want string }{
		{"", "one\ntwo\nthree\n"},
		{"?sinceTime=2026-01-02T10:00:01Z", "two\nthree\n"},
		{"?tailLines=1", "three\n"},
		{"?limitBytes=6", "one\ntw"},
		{"?timestamps=true&sinceTime=2026-01-02T10:00:02Z", "2026-01-02T10:00:02Z three\n"},
	} {
		r := httptest.NewRequest("GET", "/containerLogs/ns/pod/c"+tc.query, nil)
		q, err := parseLogQuery(r)
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		var out io.Writer = w
		if q.limitBytes > 0 {
			out = &limitWriter{w: w, n: q.limitBytes}
		}
		serveLog(r, w, out, f, q, func() bool { return false })
		f.Close()
		if got := w.Body.String(); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.query, got, tc.want)
		}
	}
	if _, err := parseLogQuery(httptest.NewRequest("GET", "/?tailLines=-1", nil)); err == nil {
		t.Error("tailLines=-1 accepted")
	}
}
