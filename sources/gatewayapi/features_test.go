package gatewayapi_test

import (
	"os"
	"slices"
	"testing"

	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"
	"sigs.k8s.io/gateway-api/pkg/features"
	"sigs.k8s.io/yaml"

	"github.com/ramjet-dev/ramjet/sources/gatewayapi"
)

// reportPath is the committed conformance report (make conformance).
const reportPath = "../../docs/conformance/report.yaml"

// TestFeaturesMatchReport keeps Features true to the committed
// conformance report: every profile passed without failures, and the
// extended features the report found supported are exactly the extended
// ones Features claims.
func TestFeaturesMatchReport(t *testing.T) {
	raw, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatal(err)
	}
	var report confv1.ConformanceReport
	if err := yaml.Unmarshal(raw, &report); err != nil {
		t.Fatalf("%s: %v", reportPath, err)
	}
	core := []string{string(features.SupportGateway), string(features.SupportHTTPRoute),
		string(features.SupportGRPCRoute), string(features.SupportReferenceGrant)}
	var reported []string
	for _, p := range report.ProfileReports {
		if p.Core.Result != confv1.Success || len(p.Core.FailedTests) > 0 {
			t.Errorf("profile %s: core result %s, failed %v", p.Name, p.Core.Result, p.Core.FailedTests)
		}
		if p.Extended != nil {
			if len(p.Extended.FailedTests) > 0 {
				t.Errorf("profile %s: extended tests failed: %v", p.Name, p.Extended.FailedTests)
			}
			reported = append(reported, p.Extended.SupportedFeatures...)
		}
	}
	var claimed []string
	for _, f := range gatewayapi.Features {
		if !slices.Contains(core, string(f)) {
			claimed = append(claimed, string(f))
		}
	}
	slices.Sort(reported)
	reported = slices.Compact(reported)
	slices.Sort(claimed)
	if !slices.Equal(claimed, reported) {
		t.Errorf("Features claims the extended features\n%v\nthe report (%s) found supported\n%v", claimed, reportPath, reported)
	}
}
