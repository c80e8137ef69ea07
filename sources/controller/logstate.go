package controller

import (
	"log/slog"
	"slices"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/sources"
)

// logState remembers what the log last said about the things a rebuild
// finds that are not Events: problems of the flags, findings on objects
// other than Ingresses (a --default-ssl-certificate Secret, say) and
// Ingresses naming an IngressClass that does not exist. Each is logged when
// it appears (and ignored Ingresses when their reason changes), not on every
// rebuild: endpoint churn rebuilds often.
type logState struct {
	problems []string
	findings map[core.Finding]bool
	ignored  map[string]string // reasons by "Kind namespace/name"
}

// update logs what is new in out.
func (s *logState) update(log *slog.Logger, out *sources.Output) {
	if !slices.Equal(out.Problems, s.problems) {
		for _, p := range out.Problems {
			log.Warn("flag problem", "problem", p)
		}
		s.problems = slices.Clone(out.Problems)
	}

	findings := map[core.Finding]bool{}
	for _, f := range out.Findings {
		if f.Object.Kind == "Ingress" {
			continue // an Event on the Ingress
		}
		findings[f] = true
		if !s.findings[f] {
			log.Warn("finding", "object", f.Object.String(), "reason", f.Reason, "message", f.Message)
		}
	}
	s.findings = findings

	ignored := make(map[string]string, len(out.Ignored))
	for _, ig := range out.Ignored {
		key := ig.Kind + " " + ig.Object.String()
		ignored[key] = ig.Reason
		if s.ignored[key] != ig.Reason {
			log.Info(ig.Kind+" not served: its class is unknown", "object", ig.Object.String(), "reason", ig.Reason)
		}
	}
	s.ignored = ignored
}
