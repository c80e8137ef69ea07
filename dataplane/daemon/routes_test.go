package daemon

import (
	"io"
	"net/http"
	"testing"
)

// matchConfig routes by method and query parameters, as the Gateway API's
// HTTPRouteMethodMatching and HTTPRouteQueryParamMatching tests do.
const matchConfig = baseConfig + `
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /}}
            action: {pool: main}
          - match: {path: {prefix: /}, method: POST}
            action: {pool: post}
          - match: {path: {prefix: /}, query: [{name: animal, exact: whale}, {name: id, regex: "[0-9]+"}]}
            action: {pool: query}
    pools:
      main: {members: ["{{.Main}}"]}
      post: {members: ["{{.Post}}"]}
      query: {members: ["{{.Query}}"]}
`

func TestMethodAndQueryRouting(t *testing.T) {
	main, post, query := startBackend(t, echo("main")), startBackend(t, echo("post")), startBackend(t, echo("query"))
	td := startDaemon(t, matchConfig, map[string]any{"Main": main.addr, "Post": post.addr, "Query": query.addr})
	c := client()
	cases := []struct {
		name, method, target, want string
	}{
		{"GET goes to main", http.MethodGet, "/x", "main GET /x 0"},
		{"POST goes to post", http.MethodPost, "/x", "post POST /x 0"},
		{"query matches, query forwarded as sent", http.MethodGet, "/x?id=7&animal=whale", "query GET /x?id=7&animal=whale 0"},
		{"first value counts", http.MethodGet, "/x?animal=dolphin&animal=whale&id=7", "main GET /x?animal=dolphin&animal=whale&id=7 0"},
		{"names are case-sensitive", http.MethodGet, "/x?Animal=whale&id=7", "main GET /x?Animal=whale&id=7 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, td.url("http")+tc.target, nil)
			req.Host = "app.test"
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || string(body) != tc.want {
				t.Errorf("got %d %q, want 200 %q", resp.StatusCode, body, tc.want)
			}
		})
	}
}
