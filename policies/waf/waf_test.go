package waf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

const (
	sqli = "/?id=" + "1%27%20OR%20%271%27%3D%271"                       // 1' OR '1'='1
	xss  = "/?q=" + "%3Cscript%3Ealert(document.cookie)%3C%2Fscript%3E" // <script>alert(document.cookie)</script>
)

var (
	crsOn        = &config.WAF{CoreRules: true, Directives: "SecRuleEngine On\n"}
	crsDetection = &config.WAF{CoreRules: true}
)

// TestCoreRules sends attacks and a clean request through the Core Rule
// Set: blocked with 403 in On mode, served and logged in DetectionOnly.
func TestCoreRules(t *testing.T) {
	tests := []struct {
		name       string
		cfg        *config.WAF
		target     string
		wantStatus int
		wantRule   string // a rule ID in the audit line; "" for no line
		blocked    bool
	}{
		{"sqli blocked in On", crsOn, sqli, 403, `"id":942100`, true},
		{"xss blocked in On", crsOn, xss, 403, `"id":941100`, true},
		{"clean served in On", crsOn, "/products?id=42&sort=name", 200, "", false},
		{"sqli served in DetectionOnly", crsDetection, sqli, 200, `"id":942100`, false},
		{"xss served in DetectionOnly", crsDetection, xss, 200, `"id":941100`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := startSite(t, tc.cfg, 0)
			status, _ := s.do(t, "GET", tc.target, "", nil)
			if status != tc.wantStatus {
				t.Errorf("status %d, want %d", status, tc.wantStatus)
			}
			calls, _, _ := s.member.last()
			if served := calls == 1; served != (tc.wantStatus == 200) {
				t.Errorf("member saw %d requests", calls)
			}
			log := s.log.String()
			if tc.wantRule == "" {
				if log != "" {
					t.Errorf("audit lines for a clean request: %s", log)
				}
				return
			}
			got := lines(log, `"msg":"waf: request matched ModSecurity rules"`, tc.wantRule)
			if len(got) != 1 {
				t.Fatalf("want one audit line with %s, log:\n%s", tc.wantRule, log)
			}
			var line struct {
				Blocked bool    `json:"blocked"`
				Status  int     `json:"status"`
				Path    string  `json:"path"`
				Rules   []Match `json:"rules"`
			}
			if err := json.Unmarshal([]byte(got[0]), &line); err != nil {
				t.Fatal(err)
			}
			if line.Blocked != tc.blocked || line.Path != "/" {
				t.Errorf("audit line blocked %t path %q, want %t and /: %s", line.Blocked, line.Path, tc.blocked, got[0])
			}
			if tc.blocked && line.Status != 403 {
				t.Errorf("audit line status %d, want 403: %s", line.Status, got[0])
			}
			if strings.Contains(got[0], "ramjet-test") {
				t.Errorf("the audit line holds a request header value: %s", got[0])
			}
		})
	}
}

// TestExclusion turns off the SQL injection rules for one path with a
// rule of the directives, as a tenant's snippet does.
func TestExclusion(t *testing.T) {
	cfg := &config.WAF{CoreRules: true, Directives: "SecRuleEngine On\n" +
		`SecRule REQUEST_FILENAME "@beginsWith /search" \` + "\n" +
		`    "id:10001,phase:1,pass,nolog,ctl:ruleRemoveByTag=attack-sqli"` + "\n"}
	s := startSite(t, cfg, 0)
	if status, _ := s.do(t, "GET", strings.Replace(sqli, "/", "/search", 1), "", nil); status != 200 {
		t.Errorf("excluded path: status %d, want 200", status)
	}
	if status, _ := s.do(t, "GET", sqli, "", nil); status != 403 {
		t.Errorf("other path: status %d, want 403", status)
	}
}

// TestRemoveByID removes rules after the Core Rule Set loaded them.
func TestRemoveByID(t *testing.T) {
	cfg := &config.WAF{CoreRules: true, Directives: "SecRuleEngine On\nSecRuleRemoveById 949110\n"}
	s := startSite(t, cfg, 0)
	if status, _ := s.do(t, "GET", sqli, "", nil); status != 200 {
		t.Errorf("without the blocking evaluation rule: status %d, want 200", status)
	}
}

// TestBody checks that the body rules read a form body, and that a body
// the rules read reaches the member intact.
func TestBody(t *testing.T) {
	s := startSite(t, crsOn, 0)
	attack := url.Values{"user": {"1' OR '1'='1"}}.Encode()
	if status, _ := s.do(t, "POST", "/login", "application/x-www-form-urlencoded", strings.NewReader(attack)); status != 403 {
		t.Errorf("sqli in a form body: status %d, want 403", status)
	}
	tests := []struct {
		name, contentType string
		body              []byte
	}{
		{"form", "application/x-www-form-urlencoded", []byte(url.Values{"name": {"Ada Lovelace"}, "city": {"London"}}.Encode())},
		{"json", "application/json", []byte(`{"order":{"items":[1,2,3],"note":"leave at the door"}}`)},
		{"json over the in-memory size of the recommended configuration", "application/json", []byte(`{"blob":"` + strings.Repeat("abcdefgh", 17_500) + `"}`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _ := s.do(t, "POST", "/orders", tc.contentType, bytes.NewReader(tc.body))
			if status != 200 {
				t.Fatalf("status %d, want 200; log:\n%s", status, s.log.String())
			}
			_, got, _ := s.member.last()
			if !bytes.Equal(got, tc.body) {
				t.Errorf("the member got %d bytes, want the %d sent", len(got), len(tc.body))
			}
		})
	}
}

// TestBodyLimits: over SecRequestBodyLimit is 413 in On mode (Reject);
// beyond it in DetectionOnly the body still reaches the member whole; the
// route's own body limit (in front) answers 413 too.
func TestBodyLimits(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 4096)
	tests := []struct {
		name       string
		cfg        *config.WAF
		routeLimit int64
		wantStatus int
	}{
		{"over SecRequestBodyLimit in On", &config.WAF{Directives: "SecRuleEngine On\nSecRequestBodyLimit 1000\n"}, 0, 413},
		{"over SecRequestBodyLimit in DetectionOnly", &config.WAF{Directives: "SecRequestBodyLimit 1000\n"}, 0, 200},
		{"over the route's limit", &config.WAF{Directives: "SecRuleEngine On\n"}, 1000, 413},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := startSite(t, tc.cfg, tc.routeLimit)
			status, _ := s.do(t, "POST", "/upload", "text/plain", bytes.NewReader(body))
			if status != tc.wantStatus {
				t.Fatalf("status %d, want %d", status, tc.wantStatus)
			}
			if status == 200 {
				if _, got, _ := s.member.last(); !bytes.Equal(got, body) {
					t.Errorf("the member got %d bytes, want %d", len(got), len(body))
				}
			}
		})
	}
}

// TestTransactionID: $request_id names the transaction with the request's
// X-Request-Id, which the member gets too; a literal is used as it is.
func TestTransactionID(t *testing.T) {
	tests := []struct {
		name, id, clientID, want string
	}{
		{"request id from the client", config.TransactionIDRequestID, "abc-123", "abc-123"},
		{"request id made by ramjetd", config.TransactionIDRequestID, "", ""},
		{"literal", "shop-frontend", "abc-123", "shop-frontend"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := startSite(t, &config.WAF{CoreRules: true, TransactionID: tc.id}, 0)
			var header []string
			if tc.clientID != "" {
				header = []string{"X-Request-Id", tc.clientID}
			}
			s.do(t, "GET", sqli, "", nil, header...)
			_, _, memberID := s.member.last()
			want := tc.want
			if want == "" {
				if len(memberID) != 32 {
					t.Fatalf("the member got X-Request-Id %q, want 32 hex digits", memberID)
				}
				want = memberID
			}
			if got := lines(s.log.String(), `"transaction":"`+want+`"`); len(got) != 1 {
				t.Errorf("want an audit line with transaction %q, log:\n%s", want, s.log.String())
			}
		})
	}
}

// TestBuildRefuses: Build refuses what config.CheckDirectives refuses and
// what Coraza cannot parse, naming the problem.
func TestBuildRefuses(t *testing.T) {
	tests := []struct{ directives, want string }{
		{"SecAuditLog /var/log/audit.log", `"SecAuditLog" is not allowed`},
		{"Include /etc/passwd", `"Include" is not allowed`},
		{`SecRule ARGS "@rx x" "id:1,phase:1,deny,exec:/bin/sh"`, "action exec is not allowed"},
		{`SecRule ARGS "@rx x" "id:1,phase:1,deny,status:403"` + "\n" + `SecRule ARGS "@nope x" "id:2,phase:1,pass"`, "do not load"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			_, err := Build(&config.WAF{Directives: tc.directives})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestCheck: Check parses rules as Build does, standing in for the Core
// Rule Set's rules that the directives update.
func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		cfg  *config.WAF
		want string // a substring of the error; "" for none
	}{
		{"an update of a Core Rule Set rule", &config.WAF{CoreRules: true, Directives: `SecRuleUpdateTargetById 942100 "!ARGS:password"`}, ""},
		{"the same update without the Core Rule Set", &config.WAF{Directives: `SecRuleUpdateTargetById 942100 "!ARGS:password"`}, `rule "942100" not found`},
		{"an update of an ID in the Core Rule Set's range that it does not have", &config.WAF{CoreRules: true, Directives: `SecRuleUpdateTargetById 942999 "!ARGS:password"`}, `rule "942999" not found`},
		{"an update of a rule outside the Core Rule Set's range", &config.WAF{CoreRules: true, Directives: `SecRuleUpdateActionById 12345 "pass"`}, `rule "12345" not found`},
		{"an unknown operator", &config.WAF{Directives: `SecRule ARGS "@nope x" "id:1,phase:2,deny"`}, "operator nope not found"},
		{"a refused directive", &config.WAF{Directives: "SecDataDir /tmp"}, `"SecDataDir" is not allowed`},
		{"a valid rule", &config.WAF{Directives: `SecRule ARGS:q "@contains attack" "id:1,phase:2,deny,status:403,log,msg:'attack'"`}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.cfg)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestCoreRuleIDs: every ID Check stands in for is a rule of the packaged
// Core Rule Set (Build accepts an update of each), and the list is not
// empty.
func TestCoreRuleIDs(t *testing.T) {
	ids := coreRuleIDs()
	if len(ids) < 100 || !ids[942100] || !ids[949110] {
		t.Fatalf("%d Core Rule Set IDs, 942100 %v, 949110 %v: the packaged rule set was not read", len(ids), ids[942100], ids[949110])
	}
	var updates strings.Builder
	for id := range ids {
		fmt.Fprintf(&updates, "SecRuleUpdateActionById %d \"tag:ramjet-probe\"\n", id)
	}
	e, err := Build(&config.WAF{CoreRules: true, Directives: updates.String()})
	if err != nil {
		t.Fatalf("an update of each ID Check knows: %v", err)
	}
	e.Close()
}
