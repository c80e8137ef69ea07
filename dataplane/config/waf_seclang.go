package config

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// allowedDirectives are the SecLang directives WAF.Directives may hold, by
// lower-case name (SecLang names are case-insensitive): rules, the engine
// mode, exclusions and request body limits. Everything else, Include and
// the directives that name files, programs, remote rules or the audit and
// debug logs among them, is refused.
var allowedDirectives = map[string]bool{
	"secrule":                      true,
	"secaction":                    true,
	"secmarker":                    true,
	"secdefaultaction":             true,
	"secruleengine":                true,
	"secruleremovebyid":            true,
	"secruleremovebytag":           true,
	"secruleremovebymsg":           true,
	"secruleupdatetargetbyid":      true,
	"secruleupdatetargetbytag":     true,
	"secruleupdateactionbyid":      true,
	"secrequestbodyaccess":         true,
	"secrequestbodylimit":          true,
	"secrequestbodynofileslimit":   true,
	"secrequestbodylimitaction":    true,
	"secrequestbodyjsondepthlimit": true,
	"secargumentslimit":            true,
}

// refusedActions are rule actions that change the process or run
// programs: exec (a script) and setenv (ramjetd's environment).
var refusedActions = regexp.MustCompile(`(?i)(?:^|[\s",'])(exec|setenv)\s*:`)

// refusedOperators are rule operators that run programs or reach the
// network: @inspectFile and @rbl (DNS lookups).
var refusedOperators = regexp.MustCompile(`(?i)@(inspectFile|rbl)\b`)

// ctlOption finds the options of ctl actions.
var ctlOption = regexp.MustCompile(`(?i)(?:^|[\s",'])ctl\s*:\s*([A-Za-z]+)`)

// allowedCtl are the ctl options a rule may use, by lower-case name:
// engine mode, exclusions, body access and processor. The others
// (ctl:auditLogParts, ctl:requestBodyLimit, ctl:debugLogLevel, the
// response body ones, ...) are refused: audit lines have fixed content,
// the inspected body is held in memory up to SecRequestBodyLimit, and
// responses are not inspected.
var allowedCtl = map[string]bool{
	"ruleengine":               true,
	"ruleremovebyid":           true,
	"ruleremovebytag":          true,
	"ruleremovebymsg":          true,
	"ruleremovetargetbyid":     true,
	"ruleremovetargetbytag":    true,
	"ruleremovetargetbymsg":    true,
	"requestbodyaccess":        true,
	"requestbodyprocessor":     true,
	"forcerequestbodyvariable": true,
}

// CheckDirectives checks SecLang text for WAF.Directives: each directive
// (lines joined where they end with \, as Coraza reads them; blank lines
// and # comments skipped) must be one allowedDirectives holds, use no
// refused action, operator or ctl option, and SecRequestBodyLimit must be
// 1 to MaxWAFRequestBodyLimit. The error names the directive. It does not
// parse rules: Coraza does that when ramjetd builds the WAF.
func CheckDirectives(text string) error {
	return eachDirective(text, func(line int, directive string) error {
		if err := checkDirective(directive); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		return nil
	})
}

// WAFRequestBodyLimit is the last SecRequestBodyLimit of directives that
// CheckDirectives accepted, DefaultWAFRequestBodyLimit without one.
func WAFRequestBodyLimit(directives string) int64 {
	limit := int64(DefaultWAFRequestBodyLimit)
	eachDirective(directives, func(_ int, line string) error {
		name, opts, _ := strings.Cut(line, " ")
		if strings.EqualFold(name, "SecRequestBodyLimit") {
			if n, err := strconv.ParseInt(strings.TrimSpace(opts), 10, 64); err == nil {
				limit = n
			}
		}
		return nil
	})
	return limit
}

// eachDirective calls fn with each directive of text and the number of
// the line it starts on, read the way Coraza's parser reads them, until fn
// fails.
func eachDirective(text string, fn func(line int, directive string) error) error {
	scanner := bufio.NewScanner(strings.NewReader(text))
	scanner.Buffer(make([]byte, 0, 4096), MaxWAFDirectivesBytes+1)
	var joined strings.Builder
	number, start := 0, 0
	for scanner.Scan() {
		number++
		line := strings.TrimSpace(scanner.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if joined.Len() == 0 {
			start = number
		}
		if strings.HasPrefix(line, "`") || strings.HasSuffix(line, "`") {
			return fmt.Errorf("line %d: backtick blocks (SecDataset) are not allowed", number)
		}
		if strings.HasSuffix(line, `\`) {
			joined.WriteString(strings.TrimSuffix(line, `\`))
			continue
		}
		joined.WriteString(line)
		if err := fn(start, joined.String()); err != nil {
			return err
		}
		joined.Reset()
	}
	if err := scanner.Err(); err != nil {
		return err
	}
	if joined.Len() > 0 {
		return fn(start, joined.String())
	}
	return nil
}

func checkDirective(line string) error {
	name, opts, _ := strings.Cut(line, " ")
	lower := strings.ToLower(name)
	if !allowedDirectives[lower] {
		return fmt.Errorf("directive %s is not allowed: only rules, the engine mode, exclusions and request body limits are (%s)",
			quoteName(name), "SecRule, SecAction, SecMarker, SecDefaultAction, SecRuleEngine, SecRuleRemoveBy*, SecRuleUpdate*, SecRequestBody*, SecArgumentsLimit")
	}
	if m := refusedActions.FindStringSubmatch(line); m != nil {
		return fmt.Errorf("%s: action %s is not allowed: it runs a program or changes ramjetd's environment", name, m[1])
	}
	if m := refusedOperators.FindStringSubmatch(line); m != nil {
		return fmt.Errorf("%s: operator @%s is not allowed: it runs a program or reaches the network", name, m[1])
	}
	for _, m := range ctlOption.FindAllStringSubmatch(line, -1) {
		if !allowedCtl[strings.ToLower(m[1])] {
			return fmt.Errorf("%s: ctl:%s is not allowed: only ctl:ruleEngine, ctl:ruleRemove*, ctl:requestBodyAccess, "+
				"ctl:requestBodyProcessor and ctl:forceRequestBodyVariable are", name, m[1])
		}
	}
	if lower == "secrequestbodylimit" {
		n, err := strconv.ParseInt(strings.TrimSpace(opts), 10, 64)
		if err != nil || n < 1 || n > MaxWAFRequestBodyLimit {
			return fmt.Errorf("%s must be a number of bytes from 1 to %d", name, MaxWAFRequestBodyLimit)
		}
	}
	return nil
}

// quoteName quotes a directive name for an error, cut to 64 bytes.
func quoteName(name string) string {
	if len(name) > 64 {
		name = name[:64] + "..."
	}
	return strconv.Quote(name)
}

// transactionIDLiteral is what a literal transaction ID may hold (the
// characters of ingress-nginx's validator but $ and braces).
var transactionIDLiteral = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// CheckTransactionID checks a WAF.TransactionID: empty,
// TransactionIDRequestID, or a literal of letters, digits, _ and - (at
// most MaxTransactionIDBytes). Other nginx variables are refused: ramjetd
// has no equivalent of them.
func CheckTransactionID(id string) error {
	switch {
	case id == "" || id == TransactionIDRequestID:
		return nil
	case strings.Contains(id, "$"):
		return fmt.Errorf("%q: the only variable is %s (the request ID); other nginx variables are not provided", truncate(id), TransactionIDRequestID)
	case len(id) > MaxTransactionIDBytes || !transactionIDLiteral.MatchString(id):
		return fmt.Errorf("%q: a literal must be 1 to %d letters, digits, _ or -", truncate(id), MaxTransactionIDBytes)
	}
	return nil
}

// truncate cuts s to 64 bytes for an error message.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
