package exchange

import "testing"

// TestReplacePrefix is the table of HTTPPathModifier.ReplacePrefixMatch in
// the Gateway API, then the cases of its HTTPRouteRewritePath and
// HTTPRouteRedirectPath conformance tests.
func TestReplacePrefix(t *testing.T) {
	tests := []struct {
		path, prefix, replacement, want string
	}{
		{"/foo/bar", "/foo", "/xyz", "/xyz/bar"},
		{"/foo/bar", "/foo", "/xyz/", "/xyz/bar"},
		{"/foo/bar", "/foo/", "/xyz", "/xyz/bar"},
		{"/foo/bar", "/foo/", "/xyz/", "/xyz/bar"},
		{"/foo", "/foo", "/xyz", "/xyz"},
		{"/foo/", "/foo", "/xyz", "/xyz/"},
		{"/foo/bar", "/foo", "", "/bar"},
		{"/foo/", "/foo", "", "/"},
		{"/foo", "/foo", "", "/"},
		{"/foo/", "/foo", "/", "/"},
		{"/foo", "/foo", "/", "/"},
		{"/prefix/one/two", "/prefix/one", "/one", "/one/two"},
		{"/strip-prefix/three", "/strip-prefix", "/", "/three"},
		{"/strip-prefix", "/strip-prefix", "/", "/"},
		{"/prefix/rewrite-path-and-modify-headers/one", "/prefix/rewrite-path-and-modify-headers", "/prefix", "/prefix/one"},
		{"/original-prefix/lemon", "/original-prefix", "/replacement-prefix", "/replacement-prefix/lemon"},
		{"/a/b", "/", "/x", "/x/a/b"},
		{"/", "/", "/x", "/x/"},
		{"/foobar", "/foo", "/x", "/foobar"},
		{"/other", "/foo", "/x", "/other"},
	}
	for _, tt := range tests {
		if got := ReplacePrefix(tt.path, tt.prefix, tt.replacement); got != tt.want {
			t.Errorf("ReplacePrefix(%q, %q, %q) = %q, want %q", tt.path, tt.prefix, tt.replacement, got, tt.want)
		}
	}
}
