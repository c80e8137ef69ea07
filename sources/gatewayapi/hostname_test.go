package gatewayapi

import (
	"slices"
	"testing"
)

// TestIntersect checks the spec's hostname table
// (site/content/en/docs/concepts/hostnames.md) and the one-or-more-labels
// rule of wildcards.
func TestIntersect(t *testing.T) {
	for _, tc := range []struct {
		listener, route, want string
		ok                    bool
	}{
		{"", "", "", true},
		{"", "foo.example.com", "foo.example.com", true},
		{"foo.example.com", "", "foo.example.com", true},
		{"foo.example.com", "foo.example.com", "foo.example.com", true},
		{"foo.example.com", "FOO.Example.com", "foo.example.com", true},
		{"foo.example.com", "bar.example.com", "", false},
		{"*.example.com", "foo.example.com", "foo.example.com", true},
		{"*.example.com", "foo.bar.example.com", "foo.bar.example.com", true},
		{"*.example.com", "example.com", "", false},
		{"*.example.com", "fooexample.com", "", false},
		{"foo.example.com", "*.example.com", "foo.example.com", true},
		{"example.com", "*.example.com", "", false},
		{"*.example.com", "*.example.com", "*.example.com", true},
		{"*.example.com", "*.com", "*.example.com", true},
		{"*.com", "*.example.com", "*.example.com", true},
		{"*.example.com", "*.bar.example.com", "*.bar.example.com", true},
		{"*.example.com", "*.example.net", "", false},
		{"*.foo.com", "*.bar.com", "", false},
	} {
		got, ok := intersect(tc.listener, tc.route)
		if got != tc.want || ok != tc.ok {
			t.Errorf("intersect(%q, %q) = %q, %v; want %q, %v", tc.listener, tc.route, got, ok, tc.want, tc.ok)
		}
	}
}

func TestServedHostnames(t *testing.T) {
	for _, tc := range []struct {
		name     string
		listener string
		route    []string
		want     []string
	}{
		{"no route hostnames serve the listener's", "*.example.com", nil, []string{"*.example.com"}},
		{"no hostnames at all serve any", "", nil, []string{""}},
		{"non-intersecting ones are ignored", "*.example.com", []string{"example.com", "a.example.com", "b.example.net"}, []string{"a.example.com"}},
		{"duplicates after intersection are one", "a.example.com", []string{"*.example.com", "A.example.com", "*.com"}, []string{"a.example.com"}},
		{"none intersects", "a.example.com", []string{"b.example.com"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := servedHostnames(tc.listener, tc.route); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHostnameOrder(t *testing.T) {
	got := []string{"", "*.example.com", "a.example.com", "*.a.example.com", "b.example.com", "long.a.example.com"}
	slices.SortFunc(got, compareHostnames)
	want := []string{"long.a.example.com", "a.example.com", "b.example.com", "*.a.example.com", "*.example.com", ""}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, tc := range []struct {
		other, name string
		want        bool
	}{
		{"", "a.example.com", true},
		{"*.example.com", "a.example.com", true},
		{"*.example.com", "*.a.example.com", true},
		{"*.a.example.com", "*.example.com", false},
		{"a.example.com", "*.example.com", false},
		{"a.example.com", "a.example.com", true},
	} {
		if got := covers(tc.other, tc.name); got != tc.want {
			t.Errorf("covers(%q, %q) = %v, want %v", tc.other, tc.name, got, tc.want)
		}
	}
}
