package tcpecho

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"testing"
	"time"

	"sigs.k8s.io/gateway-api/conformance/utils/tcp"

	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/certs"
	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/config"
	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/testpki"
)

var pod = config.Pod{Namespace: "gateway-conformance-infra", Name: "tcp-echo-one-6c4-xyz", Service: "tcp-echo-one"}

func serve(t *testing.T, tc *tls.Config) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	s := &Server{Pod: pod, TCPPort: 3000, TLSPort: 8443}
	go func() { done <- s.Serve(ctx, l, tc) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return l.Addr().String()
}

// TestSuiteClient runs the suite's own TCP checks (welcome, PING, IS_TLS,
// TEST parsed into its type) against a plain and a TLS listener.
func TestSuiteClient(t *testing.T) {
	pki := testpki.Write(t, "tcp.example.com")
	tc, err := certs.Server(pki.Cert, pki.Key, "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		server   *tls.Config
		dialer   tcp.Dialer
		expected tcp.ExpectedResponse
	}{
		{
			name:     "plain",
			dialer:   &net.Dialer{},
			expected: tcp.ExpectedResponse{Backend: "tcp-echo-one", Namespace: "gateway-conformance-infra"},
		},
		{
			name:     "tls",
			server:   tc,
			dialer:   &tls.Dialer{Config: &tls.Config{ServerName: "tcp.example.com", RootCAs: pki.CA.Pool}},
			expected: tcp.ExpectedResponse{BackendIsTLS: true, Backend: "tcp-echo-one", Namespace: "gateway-conformance-infra", Hostname: "tcp.example.com"},
		},
	}
	for _, c := range tests {
		t.Run(c.name, func(t *testing.T) {
			addr := serve(t, c.server)
			tcp.WaitForValidTCPResponse(t, c.dialer, addr, c.expected, 30*time.Second)
			if !c.expected.BackendIsTLS {
				got, err := tcp.EchoSendOnce(context.Background(), addr, 30*time.Second)
				if err != nil || got != pod.Name {
					t.Fatalf("EchoSendOnce: %q, %v; want %q", got, err, pod.Name)
				}
			}
		})
	}
}

// TestAnswers checks the protocol line by line, TEST's fields included.
func TestAnswers(t *testing.T) {
	addr := serve(t, nil)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A bound on a lost answer, so a failure ends instead of hanging.
	if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	if got, err := r.ReadString('\n'); err != nil || got != Welcome {
		t.Fatalf("welcome %q, %v", got, err)
	}
	tests := []struct{ send, want string }{
		{"PING", "PONG\n"},
		{"IS_TLS", "false\n"},
		{"TEST", `{"namespace":"gateway-conformance-infra","ingress":"","service":"tcp-echo-one","pod":"tcp-echo-one-6c4-xyz","tcpport":"3000","tlsport":"8443","isTLS":false}` + "\n"},
		{"UNKNOWN\nPING", "PONG\n"},
		{"PING\r", "PONG\n"},
	}
	for _, tc := range tests {
		if _, err := fmt.Fprintf(conn, "%s\n", tc.send); err != nil {
			t.Fatal(err)
		}
		got, err := r.ReadString('\n')
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.send, got, err, tc.want)
		}
	}
	var a Assertions
	if err := json.Unmarshal([]byte(tests[2].want), &a); err != nil || a.Pod != pod.Name {
		t.Errorf("TEST answer does not parse back: %v %+v", err, a)
	}
}
