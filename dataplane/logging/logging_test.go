package logging

import (
	"bytes"
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	tests := []struct {
		level, format string
		err           string
		want          string // a substring of a warning logged
	}{
		{"info", "text", "", "level=WARN msg=w"},
		{"debug", "json", "", `"level":"WARN","msg":"w"`},
		{"error", "text", "", ""},
		{"loud", "text", `--log-level "loud": want debug, info, warn or error`, ""},
		{"info", "xml", `--log-format "xml": want text or json`, ""},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		log, err := New(tc.level, tc.format, &b)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("New(%q, %q) error = %v, want %q", tc.level, tc.format, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		log.Warn("w")
		if got := b.String(); tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("New(%q, %q) logged %q, want %q", tc.level, tc.format, got, tc.want)
		}
	}
}
