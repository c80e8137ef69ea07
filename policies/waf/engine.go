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
	"regexp"
	"strconv"
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
	rules := ""
	if cfg.CoreRules {
		rules = coreRules
	}
	return build(rules, cfg.Directives)
}

// build builds the WAF of base, rules and directives.
func build(rules, directives string) (*Engine, error) {
	wafConfig := coraza.NewWAFConfig().
		WithRootFS(coreruleset.FS).
		WithDirectives(base + rules).
		WithDirectives(directives).
		WithRequestBodyInMemoryLimit(int(config.WAFRequestBodyLimit(directives)))
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

// crsIDs are the rule IDs of the Core Rule Set's range.
const crsFirstID, crsLastID = 900000, 999999

// updateByID finds the rule IDs that SecRuleUpdate*ById directives name.
var updateByID = regexp.MustCompile(`(?im)^\s*SecRuleUpdate(?:Target|Action)ById\s+(\d+)`)

// Check parses cfg's rules as Build does, but without loading the Core
// Rule Set, which takes far longer: the rules of the Core Rule Set's ID
// range that cfg.Directives update stand in for it as rules that do
// nothing. The controller checks an object's rules with it.
func Check(cfg *config.WAF) error {
	if err := config.CheckDirectives(cfg.Directives); err != nil {
		return err
	}
	var stubs strings.Builder
	if cfg.CoreRules {
		seen := map[int]bool{}
		for _, m := range updateByID.FindAllStringSubmatch(cfg.Directives, -1) {
			id, err := strconv.Atoi(m[1])
			if err != nil || id < crsFirstID || id > crsLastID || seen[id] {
				continue
			}
			seen[id] = true
			fmt.Fprintf(&stubs, "SecAction \"id:%d,phase:1,pass,nolog\"\n", id)
		}
	}
	e, err := build(stubs.String(), cfg.Directives)
	if err != nil {
		return err
	}
	e.Close()
	return nil
}
