package customheaders_test

import (
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/annotations/customheaders"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

func TestHeaders(t *testing.T) {
	tests := []struct {
		name string
		data map[string]string
		want []config.Header
		// problem is part of the error; "" for none.
		problem string
	}{
		{name: "empty", data: map[string]string{}, want: []config.Header{}},
		{name: "sorted by name", data: map[string]string{"X-B": "2", "X-A": "1"}, want: []config.Header{{Name: "X-A", Value: "1"}, {Name: "X-B", Value: "2"}}},
		{name: "underscore and digits", data: map[string]string{"X_Custom_1": "v"}, want: []config.Header{{Name: "X_Custom_1", Value: "v"}}},
		{name: "punctuation and a dollar", data: map[string]string{"X-V": `a b:;.,\/"'?!(){}[]@<>=-+*#$&` + "`|~^%"}, want: []config.Header{{Name: "X-V", Value: `a b:;.,\/"'?!(){}[]@<>=-+*#$&` + "`|~^%"}}},
		{name: "dot in the name", data: map[string]string{"X.A": "1"}, problem: `entry "X.A": "X.A" is not a header name`},
		{name: "space in the name", data: map[string]string{"X A": "1"}, problem: "is not a header name"},
		{name: "empty name", data: map[string]string{"": "1"}, problem: "a header name is required"},
		{name: "empty value", data: map[string]string{"X-A": ""}, problem: `entry "X-A": the value must be printable ASCII`},
		{name: "tab in the value", data: map[string]string{"X-A": "a\tb"}, problem: "printable ASCII"},
		{name: "line break in the value", data: map[string]string{"X-A": "a\r\nSet-Cookie: x"}, problem: "printable ASCII"},
		{name: "non-ASCII value", data: map[string]string{"X-A": "café"}, problem: "printable ASCII"},
		{name: "connection", data: map[string]string{"Connection": "close"}, problem: "Connection cannot be changed"},
		{name: "transfer-encoding any case", data: map[string]string{"transfer-encoding": "chunked"}, problem: "cannot be changed"},
		{name: "too many", data: many(customheaders.MaxHeaders + 1), problem: "65 entries, at most 64"},
		{name: "at the bound", data: many(customheaders.MaxHeaders), want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := customheaders.Headers(tc.data)
			if tc.problem != "" {
				if err == nil || !strings.Contains(err.Error(), tc.problem) {
					t.Fatalf("error %v, want one containing %q", err, tc.problem)
				}
				if v := tc.data[firstKey(tc.data)]; v != "" && strings.Contains(err.Error(), v) {
					t.Errorf("error %q holds the value %q", err, v)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if len(got) != len(tc.data) {
					t.Fatalf("got %d headers, want %d", len(got), len(tc.data))
				}
				return
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("header %d: got %v, want %v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestParseAllowed(t *testing.T) {
	tests := []struct {
		name, list string
		want       []string
		problem    string
	}{
		{name: "empty", list: ""},
		{name: "one", list: "X-Frame-Options", want: []string{"X-Frame-Options"}},
		{name: "trimmed and empty entries skipped", list: " X-A , ,X_B,", want: []string{"X-A", "X_B"}},
		{name: "case kept", list: "x-a,X-A", want: []string{"x-a", "X-A"}},
		{name: "invalid name", list: "X-A,X:B", problem: `--global-allowed-response-headers: "X:B" is not a header name`},
		{name: "framing header", list: "Content-Length", problem: "Content-Length cannot be changed"},
		{name: "hop-by-hop header", list: "keep-alive", problem: "keep-alive cannot be changed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := customheaders.ParseAllowed(tc.list)
			if tc.problem != "" {
				if err == nil || !strings.Contains(err.Error(), tc.problem) {
					t.Fatalf("error %v, want one containing %q", err, tc.problem)
				}
				return
			}
			if err != nil || strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func many(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m["X-H"+strings.Repeat("a", i)] = "v"
	}
	return m
}

func firstKey(m map[string]string) string {
	for k := range m {
		return k
	}
	return ""
}
