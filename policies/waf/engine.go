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
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"sync"

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

// updateByID finds the rule IDs that SecRuleUpdate*ById directives name.
var updateByID = regexp.MustCompile(`(?im)^\s*SecRuleUpdate(?:Target|Action)ById\s+(\d+)`)

// ruleID finds a rule's ID in its action list.
var ruleID = regexp.MustCompile(`\bid:'?(\d+)`)

// coreRuleIDs are the IDs of the rules the packaged Core Rule Set defines
// (its setup example included), read once from its files: a line that is
// a comment defines none.
var coreRuleIDs = sync.OnceValue(func() map[int]bool {
	ids := map[int]bool{}
	files, _ := fs.Glob(coreruleset.FS, "@owasp_crs/*.conf")
	for _, name := range append(files, "@crs-setup.conf.example") {
		text, err := fs.ReadFile(coreruleset.FS, name)
		if err != nil {
			panic(fmt.Sprintf("waf: the packaged Core Rule Set has no readable %s: %v", name, err))
		}
		for _, line := range strings.Split(string(text), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			for _, m := range ruleID.FindAllStringSubmatch(line, -1) {
				id, _ := strconv.Atoi(m[1])
				ids[id] = true
			}
		}
	}
	return ids
})

// Check parses cfg's rules as Build does, but without loading the Core
// Rule Set, which takes far longer: each rule of the Core Rule Set that
// cfg.Directives update stands in as a rule that does nothing, so an update
// of an ID the Core Rule Set does not have fails here as it would in
// ramjetd. The controller checks an object's rules with it.
func Check(cfg *config.WAF) error {
	if err := config.CheckDirectives(cfg.Directives); err != nil {
		return err
	}
	var stubs strings.Builder
	if cfg.CoreRules {
		seen := map[int]bool{}
		for _, m := range updateByID.FindAllStringSubmatch(cfg.Directives, -1) {
			id, err := strconv.Atoi(m[1])
			if err != nil || !coreRuleIDs()[id] || seen[id] {
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
