package server

import (
	"context"
	"crypto/tls"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	pb "sigs.k8s.io/gateway-api/conformance/echo-basic/grpcechoserver"
	confconfig "sigs.k8s.io/gateway-api/conformance/utils/config"
	confgrpc "sigs.k8s.io/gateway-api/conformance/utils/grpc"
	confhttp "sigs.k8s.io/gateway-api/conformance/utils/http"
	"sigs.k8s.io/gateway-api/conformance/utils/roundtripper"
	"sigs.k8s.io/gateway-api/conformance/utils/tcp"
	"sigs.k8s.io/gateway-api/conformance/utils/udp"

	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/config"
	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/testpki"
)

var names = []string{"http", "h2c", "https", "grpc", "grpcs", "tcp", "tls", "udp"}

// start runs the server the environment env describes, on free loopback
// ports, until the test ends.
func start(t *testing.T, env map[string]string) *Running {
	t.Helper()
	base := map[string]string{
		"POD_IP": "127.0.0.1", "HTTP_PORT": "0", "H2C_PORT": "0", "HTTPS_PORT": "0", "TCP_PORT": "0", "TLS_PORT": "0", "UDP_PORT": "0",
		"NAMESPACE": "gateway-conformance-infra", "POD_NAME": "backend-v1-abc-123", "SERVICE_NAME": "backend-v1",
	}
	for k, v := range env {
		base[k] = v
	}
	c, err := config.FromEnv(func(k string) string { return base[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := Start(ctx, c, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := r.Wait(); err != nil {
			t.Errorf("wait: %v", err)
		}
	})
	return r
}

func listeners(t *testing.T, r *Running) []string {
	t.Helper()
	var out []string
	for _, n := range names {
		if a := r.Addr(n); a != nil {
			out = append(out, n)
			if !strings.HasPrefix(a.String(), "127.0.0.1:") {
				t.Errorf("listener %s on %s, want POD_IP 127.0.0.1", n, a)
			}
		}
	}
	return out
}

func TestListenersByMode(t *testing.T) {
	pki := testpki.Write(t, "abc.example.com")
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"http", nil, []string{"http", "h2c"}},
		{"http with tls", map[string]string{"TLS_SERVER_CERT": pki.Cert, "TLS_SERVER_PRIVKEY": pki.Key}, []string{"http", "h2c", "https"}},
		{"http ignores the grpc key name", map[string]string{"TLS_SERVER_CERT": pki.Cert, "TLS_SERVER_PRIV_KEY": pki.Key}, []string{"http", "h2c"}},
		{"grpc", map[string]string{"GRPC_ECHO_SERVER": "1"}, []string{"grpc"}},
		{"grpc with tls", map[string]string{"GRPC_ECHO_SERVER": "1", "TLS_SERVER_CERT": pki.Cert, "TLS_SERVER_PRIV_KEY": pki.Key}, []string{"grpc", "grpcs"}},
		{"tcp", map[string]string{"TCP_ECHO_SERVER": "1"}, []string{"tcp"}},
		{"tcp with tls", map[string]string{"TCP_ECHO_SERVER": "1", "TLS_SERVER_CERT": pki.Cert, "TLS_SERVER_PRIV_KEY": pki.Key}, []string{"tcp", "tls"}},
		{"udp", map[string]string{"UDP_ECHO_SERVER": "1"}, []string{"udp"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := listeners(t, start(t, tc.env)); !slices.Equal(got, tc.want) {
				t.Errorf("listeners %v, want %v", got, tc.want)
			}
		})
	}
}

// TestHTTPMode goes through every listener of the HTTP mode with the
// suite's round tripper, as the tls-backend Deployment is configured.
func TestHTTPMode(t *testing.T) {
	pki := testpki.Write(t, "abc.example.com")
	r := start(t, map[string]string{"TLS_SERVER_CERT": pki.Cert, "TLS_SERVER_PRIVKEY": pki.Key, "TLS_CLIENT_CACERTS": pki.ClientCA})
	httpPort := strconv.Itoa(r.Addr("http").(*net.TCPAddr).Port)
	tests := []struct {
		listener, protocol, scheme string
		response                   string
	}{
		{"http", "HTTP", "http", "HTTP/1.1"},
		{"h2c", roundtripper.H2CPriorKnowledgeProtocol, "http", "HTTP/2.0"},
		{"https", roundtripper.HTTPSProtocol, "https", "HTTP/1.1"},
		{"https", roundtripper.H2Protocol, "https", "HTTP/2.0"},
	}
	for _, tc := range tests {
		t.Run(tc.listener+" "+tc.protocol, func(t *testing.T) {
			expected := confhttp.ExpectedResponse{
				Request:         confhttp.Request{Host: "abc.example.com", Path: "/echo"},
				ExpectedRequest: &confhttp.ExpectedRequest{Request: confhttp.Request{Path: "/echo"}, HTTPPort: httpPort},
				Response:        confhttp.Response{StatusCodes: []int{200}, Protocol: tc.response},
				Backend:         "backend-v1", Namespace: "gateway-conformance-infra",
			}
			req := confhttp.MakeRequest(t, &expected, r.Addr(tc.listener).String(), tc.protocol, tc.scheme)
			if tc.scheme == "https" {
				req.ServerName, req.ServerCertificate = "abc.example.com", pki.CA.PEM
				req.GetClientCertificateHook = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pki.Client, nil }
				expected.ExpectedRequest.SNI, expected.ExpectedRequest.ClientCert = "abc.example.com", pki.ClientPEM
			}
			rt := &roundtripper.DefaultRoundTripper{TimeoutConfig: confconfig.DefaultTimeoutConfig()}
			cReq, cRes, err := rt.CaptureRoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if err := confhttp.CompareRoundTrip(t, &req, cReq, cRes, expected); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("retry counts are shared by the http and https listeners", func(t *testing.T) {
		q := url.Values{"uuid": {"shared"}, "succeedAfter": {"1"}, "responseCode": {"503"}}.Encode()
		rt := &roundtripper.DefaultRoundTripper{TimeoutConfig: confconfig.DefaultTimeoutConfig()}
		for i, step := range []struct {
			listener string
			want     int
		}{{"http", 503}, {"https", 200}} {
			req := roundtripper.Request{
				T: t, URL: url.URL{Scheme: "http", Host: r.Addr(step.listener).String(), Path: "/retry/x", RawQuery: q}, Protocol: "HTTP",
			}
			if step.listener == "https" {
				req.URL.Scheme, req.Protocol, req.ServerName, req.ServerCertificate = "https", roundtripper.HTTPSProtocol, "abc.example.com", pki.CA.PEM
			}
			_, cRes, err := rt.CaptureRoundTrip(req)
			if err != nil || cRes.StatusCode != step.want {
				t.Fatalf("try %d on %s: %v, %v; want %d", i+1, step.listener, cRes, err, step.want)
			}
		}
	})
}

func TestOtherModes(t *testing.T) {
	pki := testpki.Write(t, "abc.example.com")
	withTLS := func(mode string) map[string]string {
		return map[string]string{mode: "1", "TLS_SERVER_CERT": pki.Cert, "TLS_SERVER_PRIV_KEY": pki.Key}
	}
	t.Run("grpc", func(t *testing.T) {
		r := start(t, withTLS("GRPC_ECHO_SERVER"))
		confgrpc.MakeRequestAndExpectEventuallyConsistentResponse(t, nil,
			confconfig.TimeoutConfig{RequiredConsecutiveSuccesses: 1, MaxTimeToConsistency: 30 * time.Second}, r.Addr("grpc").String(),
			confgrpc.ExpectedResponse{
				EchoRequest: &pb.EchoRequest{}, Response: confgrpc.Response{Code: codes.OK},
				Backend: "backend-v1", Namespace: "gateway-conformance-infra",
			})
	})
	t.Run("tcp", func(t *testing.T) {
		r := start(t, withTLS("TCP_ECHO_SERVER"))
		expected := tcp.ExpectedResponse{Backend: "backend-v1", Namespace: "gateway-conformance-infra"}
		tcp.WaitForValidTCPResponse(t, &net.Dialer{}, r.Addr("tcp").String(), expected, 30*time.Second)
		expected.BackendIsTLS, expected.Hostname = true, "abc.example.com"
		dialer := &tls.Dialer{Config: &tls.Config{ServerName: "abc.example.com", RootCAs: pki.CA.Pool}}
		tcp.WaitForValidTCPResponse(t, dialer, r.Addr("tls").String(), expected, 30*time.Second)
	})
	t.Run("udp", func(t *testing.T) {
		r := start(t, map[string]string{"UDP_ECHO_SERVER": "1"})
		udp.ExpectEchoResponseFromBackend(t, 30*time.Second, r.Addr("udp").String(),
			udp.ExpectedResponse{Service: "backend-v1", Namespace: "gateway-conformance-infra"})
	})
}

func TestStartErrors(t *testing.T) {
	pki := testpki.Write(t, "abc.example.com")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port
	tests := []struct {
		name string
		c    config.Config
		want string
	}{
		{"missing certificate", config.Config{CertFile: pki.Cert + ".missing", KeyFile: pki.Key}, "TLS_SERVER_CERT and key"},
		{"key of another certificate", config.Config{CertFile: pki.Cert, KeyFile: testpki.Write(t, "x").Key}, "TLS_SERVER_CERT and key"},
		{"client authorities not PEM", config.Config{CertFile: pki.Cert, KeyFile: pki.Key, ClientCAFile: pki.Key}, "TLS_CLIENT_CACERTS"},
		{"port in use", config.Config{Address: "127.0.0.1", HTTPPort: 0, H2CPort: busyPort}, "h2c listener"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Start(context.Background(), tc.c, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				if r != nil {
					t.Cleanup(func() { r.cancel(); _ = r.Wait() })
				}
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
