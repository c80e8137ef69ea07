// Package modsecurity is the ModSecurity family: enable-modsecurity,
// enable-owasp-core-rules, modsecurity-snippet and
// modsecurity-transaction-id, served by ramjetd's waf policy (Coraza) with
// ingress-nginx's defaults: the recommended configuration in
// DetectionOnly, the OWASP Core Rule Set on request, the snippet last. The
// snippet is SecLang for Coraza, never nginx configuration; the
// directives that reach files, programs or the network are refused, and
// an object with a refused or unparsable snippet is not served.
package modsecurity

import (
	"fmt"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/policies/waf"
	"github.com/ramjet-dev/ramjet/registry"
)

// The keys Parse sees.
const (
	keyEnable        = "enable-modsecurity"
	keyCoreRules     = "enable-owasp-core-rules"
	keySnippet       = "modsecurity-snippet"
	keyTransactionID = "modsecurity-transaction-id"
)

// The files of ingress-nginx's image a snippet may include: they name what
// ramjetd packages.
const (
	includeCoreRules   = "/etc/nginx/owasp-modsecurity-crs/nginx-modsecurity.conf"
	includeRecommended = "/etc/nginx/modsecurity/modsecurity.conf"
)

func init() {
	registry.Register(&registry.Family{
		Name: "modsecurity",
		Doc: "ModSecurity (SecLang rules run by Coraza in ramjetd): the recommended configuration in DetectionOnly, the OWASP Core Rule Set on request, " +
			"and the object's own directives; audit lines go to ramjetd's log.",
		AccessControl: true,
		Keys: []registry.Key{
			{Name: keyEnable, Validate: registry.Trimmed(registry.Bool), Risk: registry.RiskLow, Scope: registry.ScopeIngress,
				Doc: "true inspects the object's requests with the recommended configuration (SecRuleEngine DetectionOnly: matches are logged, nothing is blocked, " +
					"unless modsecurity-snippet sets SecRuleEngine On); false asks for nothing and the other keys are ignored.",
				Differs: "There is no ConfigMap enable-modsecurity: the other keys of this family without enable-modsecurity make the object not served " +
					"(UnsupportedAccessControl) rather than depend on a global switch Ramjet does not have. " +
					"Response bodies are not inspected (SecResponseBodyAccess Off; ingress-nginx's recommended file has On) and response phases do not run. " +
					"Audit records are JSON lines of ramjetd's log (transaction ID, client address, method, host, normalised path, blocked or not, " +
					"and per logging rule its ID, msg, severity and logdata cut to 256 bytes; no headers, query or body), not files under /var/log/audit. " +
					"The recommended configuration also applies when modsecurity-snippet is set (ingress-nginx then leaves it out unless the ConfigMap turns ModSecurity on)."},
			{Name: keyCoreRules, Validate: registry.Trimmed(registry.Bool), Risk: registry.RiskLow, Scope: registry.ScopeIngress, Default: "false",
				Doc: "true adds the OWASP Core Rule Set packaged with ramjetd (coraza-coreruleset v4, with its example setup: anomaly scoring, paranoia level 1) " +
					"after the recommended configuration.",
				Differs: "The Core Rule Set is the one packaged with Coraza (v4.25), not the image's; its exclusion files 900 and 999 are empty, and the response rules (95x) see no body."},
			{Name: keySnippet, Validate: validateSnippet, MultiLine: true, Risk: registry.RiskCritical, Scope: registry.ScopeIngress,
				Doc: "SecLang directives applied after the recommended configuration and the Core Rule Set, so that SecRuleEngine On, SecRuleRemoveById and the like apply to them. " +
					"Allowed: SecRule, SecAction, SecMarker, SecDefaultAction, SecRuleEngine, SecRuleRemoveById/ByTag/ByMsg, SecRuleUpdateTargetById/ByTag, SecRuleUpdateActionById, " +
					"SecRequestBodyAccess, SecRequestBodyLimit (up to 128 MiB), SecRequestBodyNoFilesLimit, SecRequestBodyLimitAction, SecRequestBodyJsonDepthLimit, SecArgumentsLimit, " +
					"and Include of " + includeCoreRules + " (the packaged Core Rule Set) or " + includeRecommended + " (already applied).",
				Differs: "Parsed by Coraza, never by nginx. Any other directive (other Includes, SecAuditLog*, SecDebugLog*, SecDataDir, SecUploadDir, SecRemoteRules, " +
					"SecResponseBody*, SecRequestBodyInMemoryLimit, ...), the actions exec and setenv, the operators @inspectFile and @rbl, ctl options other than " +
					"ruleEngine, ruleRemove*, requestBodyAccess, requestBodyProcessor and forceRequestBodyVariable (ctl:auditLogParts included: the audit line is fixed), " +
					"or rules Coraza cannot parse, make the object not served (InvalidAnnotation naming the directive). " +
					"ingress-nginx places the snippet before the Core Rule Set; libmodsecurity applies exclusions wherever they are written, Coraza only to rules defined before, hence the order. " +
					"The inspected body is held in memory, up to SecRequestBodyLimit."},
			{Name: keyTransactionID, Validate: registry.Trimmed(config.CheckTransactionID), Risk: registry.RiskHigh, Scope: registry.ScopeIngress,
				Doc: "The transaction ID of the audit lines: $request_id is the request's X-Request-Id (the one the member receives; ramjetd sets it when the client sent none), " +
					"any other value of letters, digits, _ and - is used as it is; without the key Coraza generates one per request.",
				Differs: "$request_id takes a client's X-Request-Id as ingress-nginx's $req_id does (nginx's $request_id is always generated); " +
					"other nginx variables are invalid and the object is not served."},
		},
		Parse: parse,
	})
}

func parse(ctx *registry.Context, values map[string]string) core.Fragment {
	raw, ok := values[keyEnable]
	if !ok {
		if ctx.Rejected(keyEnable) {
			return nil
		}
		if keys := registry.Present(values); len(keys) > 0 {
			verb := "configures"
			if len(keys) > 1 {
				verb = "configure"
			}
			ctx.Refuse(core.UnsupportedAccessControl, "%s %s ModSecurity, which only %s%s: \"true\" turns on (ingress-nginx may turn it on in its ConfigMap, "+
				"which Ramjet does not read); the object is not served: add %s%s: \"true\", or \"false\" to opt out", strings.Join(keys, ", "), verb, registry.Prefix, keyEnable, registry.Prefix, keyEnable)
		}
		return nil
	}
	if !registry.IsTrue(raw) {
		for _, key := range registry.Present(values, keyEnable) {
			ctx.Note(core.UnknownAnnotation, "%s configures ModSecurity, which %s%s: \"false\" turns off for the object; it is ignored", key, registry.Prefix, keyEnable)
		}
		return nil
	}
	cfg := &config.WAF{CoreRules: registry.IsTrue(values[keyCoreRules]), TransactionID: strings.TrimSpace(values[keyTransactionID])}
	if snippet, ok := values[keySnippet]; ok {
		directives, coreRules, _ := translate(snippet)
		cfg.Directives = directives
		cfg.CoreRules = cfg.CoreRules || coreRules
	}
	if err := waf.Check(cfg); err != nil {
		ctx.Invalid(keySnippet, "%s", oneLine(err.Error()))
		return nil
	}
	return func(s *core.Settings) {
		s.Policies.WAF = cfg
		s.Protected = true
	}
}

// validateSnippet checks a snippet's directives against the allow list.
func validateSnippet(v string) error {
	_, _, err := translate(v)
	return err
}

// translate turns a snippet into the directives of config.WAF: the
// Include of ingress-nginx's Core Rule Set file asks for the packaged one
// (coreRules), that of its recommended file is dropped (ramjetd always
// applies it); every other line stays as written, and must pass
// config.CheckDirectives.
func translate(snippet string) (directives string, coreRules bool, err error) {
	var out strings.Builder
	for line := range strings.Lines(snippet) {
		name, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
		if strings.EqualFold(name, "Include") {
			switch strings.Trim(strings.TrimSpace(arg), `"`) {
			case includeCoreRules:
				coreRules = true
				out.WriteString("\n") // keeps the line numbers of errors
				continue
			case includeRecommended:
				out.WriteString("\n")
				continue
			}
			return "", false, fmt.Errorf("the directive Include may only name %s or %s", includeCoreRules, includeRecommended)
		}
		out.WriteString(line)
	}
	directives = out.String()
	return directives, coreRules, config.CheckDirectives(directives)
}

// oneLine keeps the first line of a message and cuts it to 300 bytes.
func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
