package grpcecho

import (
	"context"
	"crypto/tls"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	pb "sigs.k8s.io/gateway-api/conformance/echo-basic/grpcechoserver"
	"sigs.k8s.io/gateway-api/conformance/utils/config"
	confgrpc "sigs.k8s.io/gateway-api/conformance/utils/grpc"

	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/certs"
	echoconfig "github.com/ramjet-dev/ramjet/test/conformance/echo/internal/config"
	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/testpki"
)

var pod = echoconfig.Pod{Namespace: "gateway-conformance-infra", Name: "grpc-infra-backend-v1-5f6-abc", Service: "grpc-infra-backend-v1", Ingress: "ramjet"}

func serve(t *testing.T, tc *tls.Config) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(pod, tc)
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	t.Cleanup(func() {
		s.Stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return l.Addr().String()
}

func header(a *pb.Assertions, key string) []string {
	var out []string
	for _, h := range a.GetHeaders() {
		if h.GetKey() == key {
			out = append(out, h.GetValue())
		}
	}
	return out
}

// TestSuiteClient calls us with the suite's own client, the way the
// GRPCRoute tests do, and checks the answer with its comparison.
func TestSuiteClient(t *testing.T) {
	addr := serve(t, nil)
	tests := []struct {
		name     string
		expected confgrpc.ExpectedResponse
		method   string
	}{
		{
			name: "echo with metadata and authority",
			expected: confgrpc.ExpectedResponse{
				EchoRequest:     &pb.EchoRequest{},
				RequestMetadata: &confgrpc.RequestMetadata{Authority: "grpc.example.com", Metadata: map[string]string{"x-version": "one", "X-Mixed": "Case"}},
				Response:        confgrpc.Response{Code: codes.OK},
				Backend:         "grpc-infra-backend-v1",
				Namespace:       "gateway-conformance-infra",
			},
			method: pb.GrpcEcho_Echo_FullMethodName,
		},
		{
			name: "echo two",
			expected: confgrpc.ExpectedResponse{
				EchoTwoRequest: &pb.EchoRequest{},
				Response:       confgrpc.Response{Code: codes.OK},
				Backend:        "grpc-infra-backend-v1",
				Namespace:      "gateway-conformance-infra",
			},
			method: pb.GrpcEcho_EchoTwo_FullMethodName,
		},
		{
			name: "echo three is unimplemented",
			expected: confgrpc.ExpectedResponse{
				EchoThreeRequest: &pb.EchoRequest{},
				Response:         confgrpc.Response{Code: codes.Unimplemented},
			},
		},
	}
	timeouts := config.TimeoutConfig{RequiredConsecutiveSuccesses: 1, MaxTimeToConsistency: 30 * time.Second}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			confgrpc.MakeRequestAndExpectEventuallyConsistentResponse(t, nil, timeouts, addr, tc.expected)

			c := &confgrpc.DefaultClient{}
			defer c.Close()
			resp, err := c.SendRPC(t, addr, tc.expected, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Code != tc.expected.Response.Code {
				t.Fatalf("code %v, want %v", resp.Code, tc.expected.Response.Code)
			}
			if resp.Code != codes.OK {
				return
			}
			a := resp.Response.GetAssertions()
			if a.GetFullyQualifiedMethod() != tc.method {
				t.Errorf("method %q, want %q", a.GetFullyQualifiedMethod(), tc.method)
			}
			if got := a.GetContext(); got.GetPod() != pod.Name || got.GetServiceName() != pod.Service || got.GetIngress() != pod.Ingress {
				t.Errorf("context %v, want %+v", got, pod)
			}
			md := tc.expected.RequestMetadata
			if md == nil {
				if a.GetAuthority() != addr {
					t.Errorf("authority %q, want %q", a.GetAuthority(), addr)
				}
				return
			}
			if a.GetAuthority() != md.Authority {
				t.Errorf("authority %q, want %q", a.GetAuthority(), md.Authority)
			}
			if got := header(a, ":authority"); len(got) != 1 || got[0] != md.Authority {
				t.Errorf(":authority header %q, want %q", got, md.Authority)
			}
			for k, v := range map[string]string{"x-version": "one", "x-mixed": "Case"} {
				if got := header(a, k); len(got) != 1 || got[0] != v {
					t.Errorf("header %s = %q, want [%q]", k, got, v)
				}
			}
			if a.GetTlsAssertions() != nil {
				t.Errorf("plaintext call has TLS assertions %v", a.GetTlsAssertions())
			}
		})
	}
}

func TestTLS(t *testing.T) {
	pki := testpki.Write(t, "grpc.example.com")
	tc, err := certs.Server(pki.Cert, pki.Key, "")
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, tc)
	creds := credentials.NewTLS(&tls.Config{ServerName: "grpc.example.com", RootCAs: pki.CA.Pool})
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	resp, err := pb.NewGrpcEchoClient(conn).Echo(context.Background(), &pb.EchoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := resp.GetAssertions().GetTlsAssertions()
	if got.GetVersion() != "TLSv1.3" || got.GetServerName() != "grpc.example.com" || got.GetNegotiatedProtocol() != "h2" || got.GetCipherSuite() == "" {
		t.Errorf("TLS assertions %v, want TLSv1.3, grpc.example.com, h2 and a cipher suite", got)
	}
	if len(got.GetPeerCertificates()) != 0 {
		t.Errorf("peer certificates %d, want none", len(got.GetPeerCertificates()))
	}
}
