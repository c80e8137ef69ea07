package config

// WAF inspects a route's requests with ModSecurity rules (SecLang), run by
// Coraza in ramjetd, as ingress-nginx's enable-modsecurity. Every WAF
// starts from the recommended configuration packaged with the OWASP Core
// Rule Set (SecRuleEngine DetectionOnly: rules log and do not block),
// with response bodies not inspected and Coraza's own audit log off;
// ramjetd writes one log line per request a rule logged. Then come the
// Core Rule Set (with CoreRules) and last Directives, so that a
// SecRuleEngine On or a SecRuleRemoveById there applies to everything
// before it.
type WAF struct {
	// CoreRules loads the OWASP Core Rule Set packaged with ramjetd.
	CoreRules bool `yaml:"core_rules,omitempty" json:"core_rules,omitempty"`
	// Directives are SecLang lines of the directives CheckDirectives
	// allows; empty adds none.
	Directives string `yaml:"directives,omitempty" json:"directives,omitempty"`
	// TransactionID names each inspected request in the audit line:
	// TransactionIDRequestID takes the request's X-Request-Id (set when
	// the client sent none, and sent to the member), any other value (see
	// CheckTransactionID) is used as it is; empty lets Coraza generate one.
	TransactionID string `yaml:"transaction_id,omitempty" json:"transaction_id,omitempty"`
}

// TransactionIDRequestID is the WAF.TransactionID that takes the request ID.
const TransactionIDRequestID = "$request_id"

// Bounds of a WAF.
const (
	// MaxWAFDirectivesBytes bounds WAF.Directives.
	MaxWAFDirectivesBytes = 64 << 10
	// MaxTransactionIDBytes bounds a literal WAF.TransactionID.
	MaxTransactionIDBytes = 128
	// DefaultWAFRequestBodyLimit is the SecRequestBodyLimit of the
	// recommended configuration (12.5 MiB).
	DefaultWAFRequestBodyLimit = 13107200
	// MaxWAFRequestBodyLimit bounds SecRequestBodyLimit: ramjetd holds the
	// inspected part of a body in memory.
	MaxWAFRequestBodyLimit = 128 << 20
)

func (w *WAF) validate(l *errorList, path string) {
	if len(w.Directives) > MaxWAFDirectivesBytes {
		l.add(path+".directives", "must be at most %d bytes", MaxWAFDirectivesBytes)
	} else if err := CheckDirectives(w.Directives); err != nil {
		l.add(path+".directives", "%v", err)
	}
	if err := CheckTransactionID(w.TransactionID); err != nil {
		l.add(path+".transaction_id", "%v", err)
	}
}
