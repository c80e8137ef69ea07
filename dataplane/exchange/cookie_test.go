package exchange

import (
	"net/http"
	"net/netip"
	"reflect"
	"testing"
)

func TestNextCookie(t *testing.T) {
	tests := []struct {
		name                string
		line                string
		wantName, wantValue string
		wantRest            string
		wantOK              bool
	}{
		{name: "single pair", line: "a=1", wantName: "a", wantValue: "1", wantOK: true},
		{name: "pair then rest", line: "a=1; b=2", wantName: "a", wantValue: "1", wantRest: " b=2", wantOK: true},
		{name: "leading and trailing spaces", line: "  a=1  ;b=2", wantName: "a", wantValue: "1", wantRest: "b=2", wantOK: true},
		{name: "quoted value", line: `a="x y"; b=2`, wantName: "a", wantValue: "x y", wantRest: " b=2", wantOK: true},
		{name: "empty quoted value", line: `a=""`, wantName: "a", wantValue: "", wantOK: true},
		{name: "lone quote kept", line: `a="`, wantName: "a", wantValue: `"`, wantOK: true},
		{name: "unbalanced quote kept", line: `a="x`, wantName: "a", wantValue: `"x`, wantOK: true},
		{name: "empty value", line: "a=; b=2", wantName: "a", wantValue: "", wantRest: " b=2", wantOK: true},
		{name: "value with equals", line: "a=b=c", wantName: "a", wantValue: "b=c", wantOK: true},
		{name: "missing equals", line: "flag; a=1", wantName: "flag", wantValue: "", wantRest: " a=1", wantOK: false},
		{name: "empty line", line: "", wantOK: false},
		{name: "only separator", line: ";a=1", wantRest: "a=1", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, value, rest, ok := NextCookie(tt.line)
			if name != tt.wantName || value != tt.wantValue || rest != tt.wantRest || ok != tt.wantOK {
				t.Errorf("NextCookie(%q) = (%q, %q, %q, %v), want (%q, %q, %q, %v)",
					tt.line, name, value, rest, ok, tt.wantName, tt.wantValue, tt.wantRest, tt.wantOK)
			}
		})
	}
}

func TestCookieValue(t *testing.T) {
	tests := []struct {
		name    string
		cookies []string // Cookie header lines
		lookup  string
		want    string
		wantOK  bool
	}{
		{name: "no Cookie header", lookup: "a", wantOK: false},
		{name: "only cookie", cookies: []string{"a=1"}, lookup: "a", want: "1", wantOK: true},
		{name: "second of a line", cookies: []string{"x=0; a=1"}, lookup: "a", want: "1", wantOK: true},
		{name: "spaces around pairs", cookies: []string{"  x=0 ;   a=1  "}, lookup: "a", want: "1", wantOK: true},
		{name: "quoted", cookies: []string{`a="q"`}, lookup: "a", want: "q", wantOK: true},
		{name: "empty value is found", cookies: []string{"a=; b=2"}, lookup: "a", want: "", wantOK: true},
		{name: "pair without equals skipped", cookies: []string{"a; b=2"}, lookup: "b", want: "2", wantOK: true},
		{name: "name without equals is not a match", cookies: []string{"a"}, lookup: "a", wantOK: false},
		{name: "first match wins in a line", cookies: []string{"a=1; a=2"}, lookup: "a", want: "1", wantOK: true},
		{name: "first match wins across lines", cookies: []string{"a=1", "a=2"}, lookup: "a", want: "1", wantOK: true},
		{name: "found in second line", cookies: []string{"x=0; y=1", "a=3"}, lookup: "a", want: "3", wantOK: true},
		{name: "names are case-sensitive", cookies: []string{"A=1"}, lookup: "a", wantOK: false},
		{name: "prefix of a name is not a match", cookies: []string{"ab=1"}, lookup: "a", wantOK: false},
		{name: "value naming the cookie is not a match", cookies: []string{"x=a"}, lookup: "a", wantOK: false},
		{name: "empty lines", cookies: []string{"", ";;", "a=1"}, lookup: "a", want: "1", wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for _, c := range tt.cookies {
				h.Add("Cookie", c)
			}
			got, ok := CookieValue(h, tt.lookup)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("CookieValue(%q, %q) = (%q, %v), want (%q, %v)", tt.cookies, tt.lookup, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestCookieValueDoesNotAllocate(t *testing.T) {
	h := http.Header{"Cookie": {"x=0; y=1", `session="abc"`}}
	allocs := testing.AllocsPerRun(100, func() {
		if v, ok := CookieValue(h, "session"); !ok || v != "abc" {
			t.Fatalf("CookieValue = (%q, %v), want (\"abc\", true)", v, ok)
		}
	})
	if allocs != 0 {
		t.Errorf("CookieValue allocated %v times per call, want 0", allocs)
	}
}

func TestReset(t *testing.T) {
	r, _ := http.NewRequest(http.MethodGet, "http://example.com/", nil)
	x := &Request{
		HTTP:        r,
		Path:        "/p",
		Captures:    []string{"/p"},
		ClientIP:    netip.MustParseAddr("192.0.2.1"),
		Peer:        netip.MustParseAddr("192.0.2.2"),
		PeerTrusted: true,
		TLS:         true,
		Scheme:      "https",
		Port:        "443",
		ForwardPath: "/q",
		ForwardHost: "h",
	}
	x.Reset()
	if !reflect.DeepEqual(*x, Request{}) {
		t.Errorf("after Reset: got %+v, want the zero Request", *x)
	}
}

func TestHandlerFunc(t *testing.T) {
	var got *Request
	x := &Request{Path: "/x"}
	HandlerFunc(func(_ http.ResponseWriter, r *Request) { got = r }).Serve(nil, x)
	if got != x {
		t.Errorf("HandlerFunc passed %p, want %p", got, x)
	}
}
