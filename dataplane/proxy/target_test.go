package proxy

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// TestEscapePath checks a rewritten path is encoded as nginx 1.22 encodes
// it: of the printable ASCII bytes, nginx encoded exactly these in a
// rewrite measured on loopback ("/rw/a<byte>b" rewritten to "/a<byte>b"),
// plus space, "#", "%" and "?", which its table names; control bytes,
// DEL and bytes above it are encoded too.
func TestEscapePath(t *testing.T) {
	const encodedByNginx = "\"<>\\^`{|} #%?"
	for c := 0; c < 256; c++ {
		p := "/a" + string([]byte{byte(c)}) + "b"
		want := p
		if c <= ' ' || c >= 0x7f || strings.IndexByte(encodedByNginx, byte(c)) >= 0 {
			want = fmt.Sprintf("/a%%%02Xb", c)
		}
		if got := escapePath(p); got != want {
			t.Errorf("escapePath(%q) = %q, want %q", p, got, want)
		}
		// url.URL keeps it as the path sent: EscapedPath takes RawPath.
		u := url.URL{Path: p, RawPath: escapePath(p)}
		if got := u.EscapedPath(); got != want {
			t.Errorf("EscapedPath of %q = %q, want %q", p, got, want)
		}
	}
	if allocs := testing.AllocsPerRun(10, func() { escapePath("/api/v1/users") }); allocs != 0 {
		t.Errorf("escapePath of a plain path allocated %v times, want none", allocs)
	}
}

func TestVerbatimPath(t *testing.T) {
	tests := []struct {
		raw  string
		want bool
	}{
		{"", false},
		{"/plain/path", false},
		{"/group%2Fproject", false},
		{"/a!b'(c)*[d]", false}, // url.URL keeps these as they are
		{"/a\"b", true},
		{"/p/{id}", true},
		{"/a|b\\c^d`e<f>", true},
		{"/caf\xc3\xa9", true},
		{"/caf\xc3\xa9%20", true},
		{"//a\"b", false},  // net/http would send it as an absolute URI
		{"/a\"b c", false}, // a space would end the request line
		{"/a\"b\x7f", false},
		{"/a\"b#c", false},
		{"/a\"b?c", false},
	}
	for _, tt := range tests {
		if got := verbatimPath(tt.raw); got != tt.want {
			t.Errorf("verbatimPath(%q) = %v, want %v", tt.raw, got, tt.want)
		}
	}
}
