package daemon

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

var hashKeysConfig = baseConfig + `
tenants:
  t:
    applications:
` + oneRouteApp("cookies", "cookies.test", "bycookie") + `
      uris:
        domains: [uris.test]
        routes:
          - match: {path: {prefix: /}}
            action: {pool: byuri}
          - match: {path: {prefix: /rw}}
            action: {pool: byuri}
            policies: {rewrite: {path: /rewritten}}
    pools:
      bycookie:
        members: [{{range .Members}}"{{.}}", {{end}}]
        balance: hash
        hash: {by: cookie_value, cookie_name: sid}
      byuri:
        members: [{{range .Members}}"{{.}}", {{end}}]
        balance: hash
        hash: {by: request_uri}
`

// hashedGet sends GET target to the listener with the Cookie header given
// (none when empty) and returns the member that answered and what it
// received, failing on any other answer than 200 or on a Set-Cookie.
func hashedGet(t *testing.T, c *http.Client, base, host, target, cookie string) (member, received string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s (Host %s): %v", target, host, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s (Host %s): %d %q, want 200", target, host, resp.StatusCode, body)
	}
	if sc := resp.Header.Values("Set-Cookie"); len(sc) > 0 {
		t.Fatalf("GET %s (Host %s) with cookie %q: Set-Cookie %q, want none: the proxy never sets the hashed cookie", target, host, cookie, sc)
	}
	// echo answers "name METHOD URI length".
	fields := strings.Fields(string(body))
	return fields[0], fields[2]
}

// TestHashByCookieValueAndRequestURI proves that hashing an application's
// cookie or the request URI sends every request with the same key to the
// same member, spreads different keys over the members, never sets a
// cookie, and hashes the URI as the client sent it, before a rewrite.
func TestHashByCookieValueAndRequestURI(t *testing.T) {
	var members []string
	for i := range 4 {
		members = append(members, startBackend(t, echo(fmt.Sprint(i))).addr)
	}
	td := startDaemon(t, hashKeysConfig, map[string]any{"Members": members})
	h1, h2 := client(), h2Client(t)
	plain, secure := td.url("http"), td.url("https")

	tests := []struct {
		name         string
		host         string
		key          func(i int) (target, cookie string)
		wantReceived func(target string) string // the URI the member must receive
		viaHTTP2     bool                       // the same key over HTTP/2 reaches the same member
	}{
		{
			name: "cookie_value", host: "cookies.test",
			key: func(i int) (string, string) {
				return fmt.Sprintf("/cart?n=%d", i%3), fmt.Sprintf("theme=dark; sid=session-%d; INGRESSCOOKIE=x", i)
			},
			wantReceived: func(target string) string { return target },
			viaHTTP2:     true,
		},
		{
			name: "request_uri", host: "uris.test",
			key:          func(i int) (string, string) { return fmt.Sprintf("/page/%d?q=%d", i, i), "sid=same" },
			wantReceived: func(target string) string { return target },
			viaHTTP2:     true,
		},
		{
			// Every member receives /rewritten: had the rewritten URI been
			// hashed, one member would take them all.
			name: "request_uri before a rewrite", host: "uris.test",
			key:          func(i int) (string, string) { return fmt.Sprintf("/rw/%d", i), "" },
			wantReceived: func(string) string { return "/rewritten" },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			used := map[string]bool{}
			for i := range 32 {
				target, cookie := tc.key(i)
				first, received := hashedGet(t, h1, plain, tc.host, target, cookie)
				if want := tc.wantReceived(target); received != want {
					t.Fatalf("GET %s: the member received %s, want %s", target, received, want)
				}
				used[first] = true
				for range 4 {
					if got, _ := hashedGet(t, h1, plain, tc.host, target, cookie); got != first {
						t.Fatalf("GET %s with cookie %q went to member %s, before to %s", target, cookie, got, first)
					}
				}
				if tc.viaHTTP2 {
					if got, _ := hashedGet(t, h2, secure, tc.host, target, cookie); got != first {
						t.Fatalf("GET %s with cookie %q over HTTP/2 went to member %s, over HTTP/1.1 to %s", target, cookie, got, first)
					}
				}
			}
			if len(used) < 3 {
				t.Errorf("32 keys went to %d of 4 members (%v), want them spread over at least 3", len(used), used)
			}
		})
	}

	t.Run("request_uri as sent, not normalised", func(t *testing.T) {
		// /a//b/./i and /a/b/i are one route and one path to the member
		// after normalisation, but two keys.
		differ := 0
		for i := range 16 {
			raw, received := hashedGet(t, h1, plain, "uris.test", fmt.Sprintf("/a//b/./%d", i), "")
			if want := fmt.Sprintf("/a//b/./%d", i); received != want {
				t.Fatalf("the member received %s, want %s as sent", received, want)
			}
			if clean, _ := hashedGet(t, h1, plain, "uris.test", fmt.Sprintf("/a/b/%d", i), ""); clean != raw {
				differ++
			}
		}
		if differ == 0 {
			t.Errorf("/a//b/./i and /a/b/i went to the same member for all 16 i, want the URI hashed as sent")
		}
	})

	t.Run("cookie_value without the cookie", func(t *testing.T) {
		used := map[string]bool{}
		for _, cookie := range []string{"", "theme=dark", "sid=", "SID=session-1"} {
			for range 20 {
				member, _ := hashedGet(t, h1, plain, "cookies.test", "/cart", cookie)
				used[member] = true
			}
		}
		if len(used) < 3 {
			t.Errorf("80 requests without the cookie went to %d of 4 members (%v), want random members", len(used), used)
		}
	})
}
