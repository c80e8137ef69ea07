package httpecho

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"sigs.k8s.io/gateway-api/conformance/utils/config"
	confhttp "sigs.k8s.io/gateway-api/conformance/utils/http"
	"sigs.k8s.io/gateway-api/conformance/utils/roundtripper"

	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/certs"
	echoconfig "github.com/ramjet-dev/ramjet/test/conformance/echo/internal/config"
	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/testpki"
)

var pod = echoconfig.Pod{Namespace: "gateway-conformance-infra", Name: "infra-backend-v1-7d9f-x2x", Service: "infra-backend-v1"}

// serve runs a server of kind k for a fresh Handler on a loopback port and
// returns its address.
func serve(t *testing.T, k Kind, tc *tls.Config) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(New(pod, "3000", nil), k, tc)
	done := make(chan error, 1)
	go func() {
		if k == Secure {
			done <- s.ServeTLS(l, "", "")
		} else {
			done <- s.Serve(l)
		}
	}()
	t.Cleanup(func() {
		_ = s.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	return l.Addr().String()
}

func tripper() *roundtripper.DefaultRoundTripper {
	return &roundtripper.DefaultRoundTripper{TimeoutConfig: config.DefaultTimeoutConfig()}
}

// TestEchoContract sends the suite's own requests (utils/http.MakeRequest)
// through its round tripper and checks our answers with its comparison.
func TestEchoContract(t *testing.T) {
	pki := testpki.Write(t, "abc.example.com")
	tc, err := certs.Server(pki.Cert, pki.Key, pki.ClientCA)
	if err != nil {
		t.Fatal(err)
	}
	addrs := map[Kind]string{Plain: serve(t, Plain, nil), Cleartext: serve(t, Cleartext, nil), Secure: serve(t, Secure, tc)}
	clientCert := func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pki.Client, nil }

	tests := []struct {
		name      string
		kind      Kind
		protocol  string // the round tripper's Protocol
		scheme    string
		clientTLS bool
		expected  confhttp.ExpectedResponse
		proto     string // the request's protocol as echoed
		tls       *roundtripper.TLS
	}{
		{
			name: "get with host, query and headers", kind: Plain, protocol: "HTTP", scheme: "http",
			expected: confhttp.ExpectedResponse{
				Request: confhttp.Request{
					Host: "echo.example.com", Path: "/a//b?x=1&y=%2F",
					Headers: map[string]string{"X-Test": "one", "Accept": "application/json"},
				},
				ExpectedRequest: &confhttp.ExpectedRequest{
					Request:  confhttp.Request{Host: "echo.example.com", Path: "/a//b?x=1&y=%2F", Headers: map[string]string{"X-Test": "one"}},
					HTTPPort: "3000",
				},
				BackendSetResponseHeaders: map[string]string{"X-Header-Set": "set", "Cache-Control": "no-store"},
				Response: confhttp.Response{
					StatusCodes: []int{200},
					Headers:     map[string]string{"X-Header-Set": "set", "Cache-Control": "no-store", "Content-Type": "application/json"},
				},
				Backend: "infra-backend-v1", Namespace: "gateway-conformance-infra",
			},
			proto: "HTTP/1.1",
		},
		{
			name: "post", kind: Plain, protocol: "HTTP", scheme: "http",
			expected: confhttp.ExpectedResponse{
				Request:   confhttp.Request{Method: "POST", Path: "/post", Body: "payload"},
				Response:  confhttp.Response{StatusCodes: []int{200}},
				Backend:   "infra-backend-v1",
				Namespace: "gateway-conformance-infra",
			},
			proto: "HTTP/1.1",
		},
		{
			name: "h2c with prior knowledge", kind: Cleartext, protocol: roundtripper.H2CPriorKnowledgeProtocol, scheme: "http",
			expected: confhttp.ExpectedResponse{
				Request:   confhttp.Request{Host: "h2c.example.com", Path: "/h2c"},
				Response:  confhttp.Response{StatusCodes: []int{200}, Protocol: "HTTP/2.0"},
				Backend:   "infra-backend-v1",
				Namespace: "gateway-conformance-infra",
			},
			proto: "HTTP/2.0",
		},
		{
			name: "h2c answers every path with the echo", kind: Cleartext, protocol: roundtripper.H2CPriorKnowledgeProtocol, scheme: "http",
			expected: confhttp.ExpectedResponse{
				Request:   confhttp.Request{Path: "/status/500"},
				Response:  confhttp.Response{StatusCodes: []int{200}, Protocol: "HTTP/2.0"},
				Backend:   "infra-backend-v1",
				Namespace: "gateway-conformance-infra",
			},
			proto: "HTTP/2.0",
		},
		{
			name: "h2c listener refuses HTTP/1.1", kind: Cleartext, protocol: "HTTP", scheme: "http",
			expected: confhttp.ExpectedResponse{
				Request:  confhttp.Request{Path: "/h2c"},
				Response: confhttp.Response{StatusCodes: []int{400}},
			},
		},
		{
			name: "https with SNI and a client certificate", kind: Secure, protocol: roundtripper.HTTPSProtocol, scheme: "https", clientTLS: true,
			expected: confhttp.ExpectedResponse{
				Request: confhttp.Request{Host: "abc.example.com", Path: "/backend-tls"},
				ExpectedRequest: &confhttp.ExpectedRequest{
					Request: confhttp.Request{Path: "/backend-tls", SNI: "abc.example.com", ClientCert: pki.ClientPEM},
				},
				Response:   confhttp.Response{StatusCodes: []int{200}},
				Backend:    "infra-backend-v1",
				Namespace:  "gateway-conformance-infra",
				ServerName: "abc.example.com",
			},
			proto: "HTTP/1.1",
			tls:   &roundtripper.TLS{Version: "TLSv1.3", ServerName: "abc.example.com", PeerCertificates: []string{pki.ClientPEM}},
		},
		{
			name: "h2 over tls without a client certificate", kind: Secure, protocol: roundtripper.H2Protocol, scheme: "https",
			expected: confhttp.ExpectedResponse{
				Request:   confhttp.Request{Host: "abc.example.com", Path: "/h2", SNI: "abc.example.com"},
				Response:  confhttp.Response{StatusCodes: []int{200}, Protocol: "HTTP/2.0"},
				Backend:   "infra-backend-v1",
				Namespace: "gateway-conformance-infra",
			},
			proto: "HTTP/2.0",
			tls:   &roundtripper.TLS{Version: "TLSv1.3", ServerName: "abc.example.com", NegotiatedProtocol: "h2"},
		},
		{
			name: "status", kind: Plain, protocol: "HTTP", scheme: "http",
			expected: confhttp.ExpectedResponse{Request: confhttp.Request{Path: "/status/418"}, Response: confhttp.Response{StatusCodes: []int{418}}},
		},
		{
			name: "status with a query", kind: Plain, protocol: "HTTP", scheme: "http",
			expected: confhttp.ExpectedResponse{Request: confhttp.Request{Path: "/status/503?x=1"}, Response: confhttp.Response{StatusCodes: []int{400}}},
		},
		{
			name: "status not three digits", kind: Plain, protocol: "HTTP", scheme: "http",
			expected: confhttp.ExpectedResponse{Request: confhttp.Request{Path: "/status/50x"}, Response: confhttp.Response{StatusCodes: []int{400}}},
		},
		{
			name: "status below 100", kind: Plain, protocol: "HTTP", scheme: "http",
			expected: confhttp.ExpectedResponse{Request: confhttp.Request{Path: "/status/099"}, Response: confhttp.Response{StatusCodes: []int{400}}},
		},
		{
			name: "delay", kind: Plain, protocol: "HTTP", scheme: "http",
			expected: confhttp.ExpectedResponse{
				Request:   confhttp.Request{Path: "/request-timeout?delay=1ms"},
				Response:  confhttp.Response{StatusCodes: []int{200}},
				Backend:   "infra-backend-v1",
				Namespace: "gateway-conformance-infra",
			},
			proto: "HTTP/1.1",
		},
		{
			name: "bad delay", kind: Plain, protocol: "HTTP", scheme: "http",
			expected: confhttp.ExpectedResponse{Request: confhttp.Request{Path: "/x?delay=soon"}, Response: confhttp.Response{StatusCodes: []int{500}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := confhttp.MakeRequest(t, &tc.expected, addrs[tc.kind], tc.protocol, tc.scheme)
			if tc.scheme == "https" {
				req.ServerName, req.ServerCertificate = "abc.example.com", pki.CA.PEM
			}
			if tc.clientTLS {
				req.GetClientCertificateHook = clientCert
			}
			cReq, cRes, err := tripper().CaptureRoundTrip(req)
			if err != nil {
				t.Fatalf("round trip: %v", err)
			}
			if err := confhttp.CompareRoundTrip(t, &req, cReq, cRes, tc.expected); err != nil {
				t.Fatalf("suite's comparison: %v", err)
			}
			if cRes.StatusCode != 200 {
				return
			}
			if cReq.Protocol != tc.proto {
				t.Errorf("echoed proto %q, want %q", cReq.Protocol, tc.proto)
			}
			if cReq.Pod != pod.Name {
				t.Errorf("echoed pod %q, want %q", cReq.Pod, pod.Name)
			}
			want := roundtripper.TLS{}
			if tc.tls != nil {
				want = *tc.tls
			}
			got := cReq.TLS
			if got.Version != want.Version || got.ServerName != want.ServerName || got.NegotiatedProtocol != want.NegotiatedProtocol ||
				strings.Join(got.PeerCertificates, "") != strings.Join(want.PeerCertificates, "") {
				t.Errorf("echoed TLS %+v, want %+v", got, want)
			}
			if tc.tls != nil && got.CipherSuite == "" {
				t.Error("echoed TLS has no cipher suite")
			}
		})
	}
}

func TestUntrustedClientCertificateRefused(t *testing.T) {
	pki := testpki.Write(t, "abc.example.com")
	other := testpki.Write(t, "abc.example.com")
	tc, err := certs.Server(pki.Cert, pki.Key, pki.ClientCA)
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, Secure, tc)
	req := roundtripper.Request{
		T: t, URL: urlOf("https", addr, "/"), Host: "abc.example.com", Protocol: roundtripper.HTTPSProtocol,
		ServerName: "abc.example.com", ServerCertificate: pki.CA.PEM,
		GetClientCertificateHook: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &other.Client, nil },
	}
	if _, _, err := tripper().CaptureRoundTrip(req); err == nil {
		t.Fatal("a client certificate of another authority was accepted")
	}
}

func TestHealth(t *testing.T) {
	addr := serve(t, Plain, nil)
	for _, path := range []string{"/health", "//health"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "OK" {
			t.Errorf("GET %s: %d %q, want 200 \"OK\"", path, resp.StatusCode, body)
		}
	}
}

func TestSetEchoHeaders(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		want   http.Header
	}{
		{"none", nil, http.Header{}},
		{"empty, as the suite sends by default", []string{""}, http.Header{}},
		{"two", []string{"X-A: 1, x-b:2"}, http.Header{"X-A": {"1"}, "x-b": {"2"}}},
		{"repeated name joins", []string{"X-A: 1", "X-A: 2, X-A:3"}, http.Header{"X-A": {"1,2,3"}}},
		{"empty value", []string{"X-Empty:"}, http.Header{"X-Empty": {""}}},
		{"invalid name left out", []string{"bad name: 1, :2, X-Ok: 3"}, http.Header{"X-Ok": {"3"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := http.Header{}
			setEchoHeaders(got, tc.values)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if strings.Join(got[k], "|") != strings.Join(v, "|") {
					t.Errorf("header %q = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}
