package config

import (
	"strings"
	"testing"
)

func TestCheckDirectives(t *testing.T) {
	tests := []struct {
		name, directives string
		want             string // a substring of the error; "" for none
	}{
		{"empty", "", ""},
		{"engine, rules and exclusions", "SecRuleEngine On\n# a comment\n\nSecRuleRemoveById 942100\n" +
			`SecRule REQUEST_URI "@beginsWith /api" "id:1,phase:1,pass,nolog,ctl:ruleRemoveByTag=attack-sqli,ctl:ruleEngine=DetectionOnly"`, ""},
		{"a rule over several lines", "SecRule ARGS \"@rx x\" \\\n  \"id:1,phase:2,deny,status:403\"", ""},
		{"directive names are case-insensitive", "secruleengine On\nSECREQUESTBODYLIMIT 1000", ""},
		{"body limits", "SecRequestBodyAccess On\nSecRequestBodyLimit 1048576\nSecRequestBodyLimitAction ProcessPartial", ""},
		{"include", "Include /etc/passwd", `line 1: directive "Include" is not allowed`},
		{"audit log", "SecRuleEngine On\nSecAuditLog /tmp/audit", `line 2: directive "SecAuditLog" is not allowed`},
		{"debug log", "SecDebugLog /tmp/debug", `"SecDebugLog" is not allowed`},
		{"rule script", "SecRuleScript /tmp/x.lua", `"SecRuleScript" is not allowed`},
		{"remote rules", "SecRemoteRules key https://example.com/rules", `"SecRemoteRules" is not allowed`},
		{"in-memory body limit", "SecRequestBodyInMemoryLimit 1", `"SecRequestBodyInMemoryLimit" is not allowed`},
		{"a tab after the name", "SecRule\tARGS \"@rx x\" \"id:1,deny\"", "is not allowed"},
		{"exec", `SecRule ARGS "@rx x" "id:1,phase:2,deny,exec:/bin/sh"`, "action exec is not allowed"},
		{"exec on a continued line", "SecRule ARGS \"@rx x\" \\\n \"id:1,phase:2,deny,\\\n  EXEC : /bin/sh\"", "line 1: SecRule: action EXEC is not allowed"},
		{"exec added to a rule", `SecRuleUpdateActionById 942100 "exec:/bin/sh"`, "action exec is not allowed"},
		{"setenv", `SecAction "id:1,phase:1,pass,setenv:PATH=/tmp"`, "action setenv is not allowed"},
		{"inspectFile", `SecRule FILES_TMPNAMES "@inspectFile /bin/scan" "id:1,phase:2,deny"`, "operator @inspectFile is not allowed"},
		{"rbl", `SecRule REMOTE_ADDR "@rbl bl.example.com" "id:1,phase:1,deny"`, "operator @rbl is not allowed"},
		{"ctl auditLogParts", `SecAction "id:1,phase:1,pass,ctl:auditLogParts=+E"`, "ctl:auditLogParts is not allowed"},
		{"ctl requestBodyLimit", `SecAction "id:1,phase:1,pass,ctl:requestBodyLimit=999999999"`, "ctl:requestBodyLimit is not allowed"},
		{"backticks", "SecDataset list `\na\n`", "backtick blocks"},
		{"body limit too large", "SecRequestBodyLimit 999999999999", "SecRequestBodyLimit must be a number of bytes from 1 to"},
		{"body limit not a number", "SecRequestBodyLimit lots", "SecRequestBodyLimit must be a number"},
		{"a long name is cut", strings.Repeat("X", 200), `..." is not allowed`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckDirectives(tc.directives)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestWAFRequestBodyLimit(t *testing.T) {
	if got := WAFRequestBodyLimit(""); got != DefaultWAFRequestBodyLimit {
		t.Errorf("without a limit: %d, want %d", got, DefaultWAFRequestBodyLimit)
	}
	if got := WAFRequestBodyLimit("SecRequestBodyLimit 1000\nsecrequestbodylimit 2000\n"); got != 2000 {
		t.Errorf("the last limit: %d, want 2000", got)
	}
}

func TestCheckTransactionID(t *testing.T) {
	tests := []struct {
		id   string
		want string
	}{
		{"", ""},
		{"$request_id", ""},
		{"shop-frontend_1", ""},
		{"$host", "the only variable is $request_id"},
		{"${request_id}", "the only variable is $request_id"},
		{"a b", "a literal must be"},
		{strings.Repeat("a", MaxTransactionIDBytes+1), "a literal must be"},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			err := CheckTransactionID(tc.id)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
