//go:build conformance

package conformance_test

import (
	"bytes"
	"flag"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/conformance"
	"sigs.k8s.io/gateway-api/conformance/tests"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"
	"sigs.k8s.io/gateway-api/pkg/features"
	"sigs.k8s.io/yaml"

	"github.com/ramjet-dev/ramjet/test/cluster"
	"github.com/ramjet-dev/ramjet/test/harness"
)

// coreOnly runs only the tests of the profiles' core features (what CI
// runs); without it the suite reads the features to test from the
// GatewayClass's status.supportedFeatures, as a report must.
var coreOnly = flag.Bool("core-only", false, "run only the tests of the profiles' core features")

// release is the chart's release name and namespace.
const release = "ramjet"

// profiles are the conformance profiles run when -conformance-profiles is
// not given.
var profiles = []suite.ConformanceProfileName{suite.GatewayHTTPConformanceProfileName, suite.GatewayGRPCConformanceProfileName}

// TestGatewayAPIConformance runs the Gateway API conformance suite,
// unmodified, on a test cluster (test/cluster) with Ramjet installed by its
// chart in a Gateway-only, own-address install: each Gateway gets a Service
// of type LoadBalancer, and the cluster's load balancer gives it an address.
// The suite's own flags apply (-run-test, -skip-tests, -report-output,
// -debug, -conformance-profiles...).
func TestGatewayAPIConformance(t *testing.T) {
	started := time.Now()
	reg, err := harness.DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	c := cluster.Start(t, cluster.WithAPIServer(harness.WithCRDs(crdDir(t))), cluster.WithImages(reg))
	t.Logf("test cluster ready after %s", time.Since(started).Round(time.Second))

	t.Setenv("KUBECONFIG", c.Kubeconfig)
	opts := conformance.DefaultOptions(t)
	configure(t, &opts, c)
	install(t, c, opts.GatewayClassName)

	cSuite, err := suite.NewConformanceTestSuite(opts)
	if err != nil {
		t.Fatalf("conformance suite: %v", err)
	}
	if opts.ReportOutputPath != "" {
		t.Cleanup(func() { writeReport(t, cSuite, opts.ReportOutputPath) })
	}
	suiteStarted := time.Now()
	cSuite.Setup(t, tests.ConformanceTests)
	if err := cSuite.Run(t, tests.ConformanceTests); err != nil {
		t.Error(err)
	}
	t.Logf("the suite (setup and tests) took %s; %s since the test started", time.Since(suiteStarted).Round(time.Second), time.Since(started).Round(time.Second))
}

// configure fills in what the suite's flags left at their defaults: the
// profiles, the implementation, the addresses of GatewayStaticAddresses,
// and with -core-only the features.
func configure(t *testing.T, opts *suite.ConformanceOptions, c *cluster.Cluster) {
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["usable-network-addresses"] {
		opts.UsableNetworkAddresses = []gatewayv1.GatewaySpecAddress{ipAddress(usableAddress(t, c.Network))}
	}
	if !set["unusable-network-addresses"] {
		opts.UnusableNetworkAddresses = []gatewayv1.GatewaySpecAddress{ipAddress(unusableAddress(c.Network))}
	}
	if !set["gateway-class"] {
		opts.GatewayClassName = "ramjet"
	}
	if len(opts.ConformanceProfiles) == 0 {
		opts.ConformanceProfiles = profiles
	}
	if *coreOnly {
		// Setting any feature turns the inference from the GatewayClass
		// off; the profiles add their core features.
		opts.SupportedFeatures = []features.FeatureName{features.SupportGateway}
	}
	impl := &opts.Implementation
	if impl.Organization == "" {
		impl.Organization = "ramjet-dev"
	}
	if impl.Project == "" {
		impl.Project = "ramjet"
	}
	if impl.URL == "" {
		impl.URL = "https://github.com/ramjet-dev/ramjet"
	}
	if impl.Version == "" {
		impl.Version = version()
	}
	if len(impl.Contact) == 0 {
		impl.Contact = []string{"https://github.com/ramjet-dev/ramjet/issues"}
	}
}

// usableAddress is the .250 of the cluster's network, reserved so that no
// pod or other load balancer gets it: the cluster's load balancer gives it
// to the Service that asks for it.
func usableAddress(t *testing.T, n *harness.Network) netip.Addr {
	a4 := n.Prefix.Addr().As4()
	a4[3] = 250
	addr := netip.AddrFrom4(a4)
	if err := n.Reserve(addr); err != nil {
		t.Fatalf("reserving the usable address: %v", err)
	}
	return addr
}

// unusableAddress is an address of 198.18.0.0/15 outside the cluster's
// network, which the cluster's load balancer never gives (and nothing
// contacts).
func unusableAddress(n *harness.Network) netip.Addr {
	addr := netip.MustParseAddr("198.19.255.254")
	if n.Prefix.Contains(addr) {
		addr = netip.MustParseAddr("198.18.0.254")
	}
	return addr
}

// ipAddress is addr as a Gateway's spec address of type IPAddress.
func ipAddress(addr netip.Addr) gatewayv1.GatewaySpecAddress {
	return gatewayv1.GatewaySpecAddress{Type: new(gatewayv1.IPAddressType), Value: addr.String()}
}

// install installs Ramjet's chart with helm for the Gateway API only, with
// the GatewayClass named class, and waits until its pod is ready.
func install(t *testing.T, c *cluster.Cluster, class string) {
	t.Helper()
	helm(t, "install", release, chartDir(t), "--kubeconfig", c.Kubeconfig, "--namespace", release, "--create-namespace",
		"--set", "ingressController.ingress.enabled=false",
		"--set", "ingressController.gatewayAPI.enabled=true",
		"--set", "ingressController.gatewayAPI.gatewayClass.name="+class,
		"--set", "ingressController.gatewayAPI.service.type=LoadBalancer",
		"--wait", "--timeout", "3m")
}

// writeReport writes the suite's report as YAML to path.
func writeReport(t *testing.T, s *suite.ConformanceTestSuite, path string) {
	report, err := s.Report()
	if err != nil {
		t.Errorf("conformance report: %v", err)
		return
	}
	out, err := yaml.Marshal(report)
	if err != nil {
		t.Errorf("conformance report: %v", err)
		return
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Errorf("conformance report: %v", err)
	}
	t.Logf("conformance report written to %s", path)
}

// helm runs the helm the test tools built and returns its output.
func helm(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := harness.BinDir()
	if err != nil {
		t.Fatalf("test tools: %v", err)
	}
	home := t.TempDir()
	cmd := exec.Command(filepath.Join(bin, "helm"), args...)
	cmd.Env = append(os.Environ(), "HOME="+home, "HELM_CACHE_HOME="+home+"/cache",
		"HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %v: %v\n%s", args, err, stderr.Bytes())
	}
	return stdout.String()
}

// chartDir is the folder of Ramjet's chart.
func chartDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "charts", "ramjet"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// crdDir is the Gateway API's standard-channel CRDs, of the module version
// the suite comes from.
func crdDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		t.Fatalf("go list -m sigs.k8s.io/gateway-api: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
}

// version is the commit under test, as `git describe` says it.
func version() string {
	out, err := exec.Command("git", "describe", "--tags", "--always", "--dirty").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
