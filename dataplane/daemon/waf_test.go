package daemon

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// wafConfig has a route blocking with the Core Rule Set (/on), one only
// detecting (/detect) and a plain one (/plain), all to one member.
const wafConfig = `
server:
  listeners:
    http: {address: "127.0.0.1:0"}
  admin: {socket: "{{.Dir}}/admin.sock", allow_loopback_members: true}
tenants:
  t:
    applications:
      app:
        domains: [app.test]
        routes:
          - match: {path: {prefix: /on}}
            action: {pool: p}
            policies:
              waf:
                core_rules: true
                directives: |
                  {{.Directives}}
          - match: {path: {prefix: /detect}}
            action: {pool: p}
            policies:
              waf: {core_rules: true}
          - match: {path: {prefix: /plain}}
            action: {pool: p}
    pools:
      p:
        members: ["{{.Member}}"]
`

const sqliQuery = "?id=1%27%20OR%20%271%27%3D%271"

func TestWAF(t *testing.T) {
	member := startBackend(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Write(body)
	})
	td := startDaemon(t, wafConfig, map[string]any{"Member": member.addr, "Directives": "SecRuleEngine On"})
	big := []byte(`{"note":"` + strings.Repeat("0123456789", 14_000) + `"}`)
	tests := []struct {
		name, method, target string
		body                 []byte
		wantStatus           int
	}{
		{"sqli blocked in On", "GET", "/on" + sqliQuery, nil, 403},
		{"sqli served in DetectionOnly", "GET", "/detect" + sqliQuery, nil, 200},
		{"sqli served without waf", "GET", "/plain" + sqliQuery, nil, 200},
		{"clean request served in On", "GET", "/on/products?id=42", nil, 200},
		{"sqli in a json body blocked", "POST", "/on/api", []byte(`{"user":"1' OR '1'='1' --"}`), 403},
		{"a large clean body reaches the member intact", "POST", "/on/api", big, 200},
	}
	c := &http.Client{Timeout: 60 * time.Second}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != nil {
				body = bytes.NewReader(tc.body)
			}
			req, _ := http.NewRequest(tc.method, td.url("http")+tc.target, body)
			req.Host = "app.test"
			req.Header.Set("User-Agent", "ramjet-test/1.0")
			req.Header.Set("Accept", "application/json")
			if tc.body != nil {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.wantStatus, got)
			}
			if tc.wantStatus == 200 && tc.body != nil && !bytes.Equal(got, tc.body) {
				t.Errorf("the member echoed %d bytes, want the %d sent", len(got), len(tc.body))
			}
		})
	}
}

// TestWAFReload: a reload with the same rules keeps the engines; one with
// other rules builds only what changed and drops what no route uses; a
// refused directive refuses the reload and the serving rules stay.
func TestWAFReload(t *testing.T) {
	member := startBackend(t, echo("member"))
	data := map[string]any{"Member": member.addr, "Directives": "SecRuleEngine On"}
	td := startDaemon(t, wafConfig, data)
	if len(td.wafs) != 2 {
		t.Fatalf("%d engines, want 2 (On, DetectionOnly)", len(td.wafs))
	}
	before := map[[32]byte]any{}
	for k, e := range td.wafs {
		before[k] = e
	}
	td.reload(t)
	for k, e := range td.wafs {
		if before[k] != any(e) {
			t.Errorf("a reload with the same rules built engine %x again", k[:4])
		}
	}
	data["Directives"] = "SecRuleEngine On\n                  SecRuleRemoveById 949110"
	td.write(t, wafConfig, data)
	td.reload(t)
	if len(td.wafs) != 2 {
		t.Fatalf("%d engines after the change, want 2", len(td.wafs))
	}
	kept := 0
	for k, e := range td.wafs {
		if before[k] == any(e) {
			kept++
		}
	}
	if kept != 1 {
		t.Errorf("%d engines kept, want 1 (the DetectionOnly one)", kept)
	}
	if status, _, _ := get(t, client(), td.url("http")+"/on"+sqliQuery, "app.test"); status != 200 {
		t.Errorf("without the blocking evaluation rule: status %d, want 200", status)
	}
	data["Directives"] = "SecAuditLog /var/log/audit.log"
	td.write(t, wafConfig, data)
	if _, err := td.admin.Reload(t.Context()); err == nil || !strings.Contains(err.Error(), "waf.directives") ||
		!strings.Contains(err.Error(), `"SecAuditLog" is not allowed`) {
		t.Errorf("reload error %v, want one naming waf.directives and SecAuditLog", err)
	}
	if len(td.wafs) != 2 {
		t.Errorf("%d engines after a refused reload, want 2", len(td.wafs))
	}
}
