package waf

import (
	"log/slog"

	"github.com/corazawaf/coraza/v3/types"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// Bounds of an audit line.
const (
	maxAuditRules = 32
	maxAuditData  = 256
)

// Match is one rule of an audit line.
type Match struct {
	ID       int    `json:"id"`
	Message  string `json:"msg,omitempty"`
	Data     string `json:"data,omitempty"`
	Severity string `json:"severity,omitempty"`
	// Disruptive is true for the rule that interrupted the request.
	Disruptive bool `json:"disruptive,omitempty"`
}

// audit writes the audit line of a request that a rule with the log
// action matched (CRS's detections; not its nolog bookkeeping) or that a
// rule interrupted. It holds the transaction ID, the client address,
// method, host and normalised path (not the query, not the headers, not
// the body), whether and how the request was answered here, and per rule
// its ID, message, severity and logdata (which may quote the part of the
// request the rule matched, cut to 256 bytes, as ModSecurity's audit part
// H does).
func (h *Handler) audit(tx types.Transaction, x *exchange.Request, blocked *types.Interruption) {
	var matches []Match
	for _, m := range tx.MatchedRules() {
		interrupted := blocked != nil && blocked.RuleID == m.Rule().ID()
		if !logs(m) && !interrupted {
			continue
		}
		if len(matches) == maxAuditRules {
			break
		}
		matches = append(matches, Match{ID: m.Rule().ID(), Message: m.Message(), Data: cut(m.Data()),
			Severity: m.Rule().Severity().String(), Disruptive: interrupted})
	}
	if len(matches) == 0 && blocked == nil {
		return
	}
	attrs := []slog.Attr{
		slog.String("transaction", tx.ID()),
		slog.String("client", x.ClientIP.String()),
		slog.String("method", x.HTTP.Method),
		slog.String("host", x.HTTP.Host),
		slog.String("path", x.Path),
		slog.Bool("blocked", blocked != nil),
	}
	if blocked != nil {
		attrs = append(attrs, slog.String("action", blocked.Action), slog.Int("status", answeredStatus(blocked)), slog.Int("rule", blocked.RuleID))
	}
	attrs = append(attrs, slog.Any("rules", matches))
	h.log.LogAttrs(x.HTTP.Context(), slog.LevelWarn, "waf: request matched ModSecurity rules", attrs...)
}

// logs reports whether a matched rule has the log action (Coraza's
// matched rules tell, though types.MatchedRule does not declare it);
// without that information, whether it has a message.
func logs(m types.MatchedRule) bool {
	if l, ok := m.(interface{ Log() bool }); ok {
		return l.Log()
	}
	return m.Message() != ""
}

// answeredStatus is the status answer writes for an interruption.
func answeredStatus(it *types.Interruption) int {
	if it.Action == "redirect" && it.Data != "" {
		if it.Status < 300 || it.Status > 399 {
			return 302
		}
		return it.Status
	}
	return blockStatus(it)
}

func cut(s string) string {
	if len(s) > maxAuditData {
		return s[:maxAuditData] + "..."
	}
	return s
}
