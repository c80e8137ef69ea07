package controller

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/sources"
	"github.com/ramjet-dev/ramjet/sources/input"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// TestLogStateLogsChangesOnly: flag problems, findings on objects other
// than Ingresses and Ingresses of an unknown class are logged when they
// appear, not on every rebuild; Ingress findings are Events, not logs.
func TestLogStateLogsChangesOnly(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	secret := core.Origin{Kind: "Secret", Namespace: "ingress", Name: "default-cert"}
	out := func(problems ...string) *sources.Output {
		return &sources.Output{
			Result: &core.Result{Findings: []core.Finding{
				{Object: secret, Reason: core.InvalidConfiguration, Message: "the certificate has expired"},
				{Object: core.Origin{Kind: "Ingress", Namespace: "shop", Name: "web"}, Reason: core.InvalidAnnotation, Message: "an Event"},
			}},
			Ignored:  []input.Ignored{{Kind: "Ingress", Object: snapshot.Key{Namespace: "shop", Name: "old"}, Reason: "no class"}},
			Problems: problems,
		}
	}
	var s logState
	lines := func() []string {
		defer buf.Reset()
		return strings.Split(strings.TrimSpace(buf.String()), "\n")
	}

	s.update(log, out("--default-backend: no Service"))
	if got := lines(); len(got) != 3 {
		t.Fatalf("first rebuild logged %d lines, want 3 (problem, Secret finding, unknown class):\n%s", len(got), strings.Join(got, "\n"))
	}
	s.update(log, out("--default-backend: no Service"))
	if got := buf.String(); got != "" {
		t.Errorf("an unchanged rebuild logged:\n%s", got)
	}
	s.update(log, out())
	s.update(log, out("--default-backend: no Service"))
	if got := lines(); len(got) != 1 || !strings.Contains(got[0], "--default-backend") {
		t.Errorf("a problem that came back logged %q, want one line naming it", got)
	}
}
