package offline_test

import (
	"strings"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
	"github.com/ramjet-dev/ramjet/sources"
	"github.com/ramjet-dev/ramjet/sources/gatewayapi"
	"github.com/ramjet-dev/ramjet/sources/ingress"
	"github.com/ramjet-dev/ramjet/sources/input"
	"github.com/ramjet-dev/ramjet/sources/offline"
	"github.com/ramjet-dev/ramjet/test/golden"
)

// TestGatewayCheck translates each testdata/gateway-<case>.txtar as
// `translate --gateway-api --gateway-listener 80=http --gateway-listener
// 443=https --check` does, the Ingress input first:
//
//	-- input.yaml -- the objects
//	-- report --     the text report from its objects line on, and the
//	                 exit code of --check (expected)
//
// go test -update rewrites the report sections.
func TestGatewayCheck(t *testing.T) {
	golden.RunCases(t, "testdata/gateway-*.txtar", func(t *testing.T, a *golden.Archive) map[string]string {
		return map[string]string{"report": checkReport(t, a.Get("input.yaml"))}
	})
}

// checkReport translates manifests on the shared listeners and renders
// the text report from its objects line on and the exit code of --check.
func checkReport(t *testing.T, manifests string) string {
	t.Helper()
	snap, notes, err := offline.Read([]string{"-"}, strings.NewReader(manifests))
	if err != nil {
		t.Fatal(err)
	}
	sel, err := registry.Select("all")
	if err != nil {
		t.Fatal(err)
	}
	ing := &ingress.Input{Options: ingress.Options{IngressClass: ingress.DefaultIngressClass,
		ControllerClass: ingress.DefaultControllerClass, Annotations: sel}}
	gw := &gatewayapi.Input{Options: gatewayapi.Options{SupportedFeatures: gatewayapi.Features},
		Addressing: &gatewayapi.Shared{Ports: map[gatewayv1.PortNumber]string{80: "http", 443: "https"}}}
	base := &config.Server{Listeners: map[string]*config.Listener{"http": {Address: ":80"}, "https": {Address: ":443", TLS: &config.ListenerTLS{}}}}
	opts := sources.Options{Inputs: []input.Input{ing, gw}, HTTPSListener: "https"}
	opts.Core.FileDir = "/etc/ramjet/generated"
	report := offline.NewReport(sources.Translate(snap, base, opts), notes)
	var b strings.Builder
	if err := report.Write(&b, "text"); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	i := strings.Index(text, " objects: ")
	i = strings.LastIndex(text[:i], "\n") + 1
	code := "--check: exit 0\n"
	if report.NotAsWritten() {
		code = "--check: exit 1\n"
	}
	return text[i:] + "\n" + code
}
