// Package waf inspects requests with ModSecurity rules (SecLang) run by
// Coraza, as ingress-nginx's ModSecurity: the recommended configuration
// packaged with the OWASP Core Rule Set, the Core Rule Set when asked for,
// then the route's own directives. An Engine is built once per distinct
// configuration when ramjetd loads one and shared by every route that asks
// for the same; a Handler runs one Coraza transaction per request.
package waf

import (
	"crypto/sha256"
	"fmt"
	"strings"

	coreruleset "github.com/corazawaf/coraza-coreruleset/v4"
	"github.com/corazawaf/coraza/v3"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// Engine is a built Coraza WAF. It is safe for concurrent use.
type Engine struct {
	waf coraza.WAF
}

// Key identifies the Engine a configuration needs: configurations with the
// same rules share one (the transaction ID is the Handler's).
func Key(cfg *config.WAF) [32]byte {
	h := sha256.New()
	if cfg.CoreRules {
		h.Write([]byte{1})
	} else {
		h.Write([]byte{0})
	}
	h.Write([]byte(cfg.Directives))
	var key [32]byte
	h.Sum(key[:0])
	return key
}

// base are the directives every Engine starts with: the recommended
// configuration packaged with the Core Rule Set (SecRuleEngine
// DetectionOnly), with response bodies not inspected and Coraza's own audit
// log off (ramjetd writes audit lines to its log instead).
const base = "Include @coraza.conf-recommended\n" +
	"SecResponseBodyAccess Off\n" +
	"SecAuditEngine Off\n"

// coreRules loads the OWASP Core Rule Set with its example setup (anomaly
// scoring, paranoia level 1), as ingress-nginx's nginx-modsecurity.conf.
const coreRules = "Include @crs-setup.conf.example\n" +
	"Include @owasp_crs/*.conf\n"

// Build checks cfg.Directives (config.CheckDirectives) and builds the WAF:
// base, the Core Rule Set with cfg.CoreRules, then cfg.Directives. The
// request body inspected is held in memory, up to SecRequestBodyLimit.
// Files are read only from the packaged rule set, never from the host.
func Build(cfg *config.WAF) (*Engine, error) {
	if err := config.CheckDirectives(cfg.Directives); err != nil {
		return nil, err
	}
	var text strings.Builder
	text.WriteString(base)
	if cfg.CoreRules {
		text.WriteString(coreRules)
	}
	wafConfig := coraza.NewWAFConfig().
		WithRootFS(coreruleset.FS).
		WithDirectives(text.String()).
		WithDirectives(cfg.Directives).
		WithRequestBodyInMemoryLimit(int(config.WAFRequestBodyLimit(cfg.Directives)))
	w, err := coraza.NewWAF(wafConfig)
	if err != nil {
		return nil, fmt.Errorf("the ModSecurity rules do not load: %w", err)
	}
	return &Engine{waf: w}, nil
}

// Close releases what the Engine caches. Requests still running on it
// finish normally.
func (e *Engine) Close() {
	if c, ok := e.waf.(interface{ Close() error }); ok {
		c.Close()
	}
}
