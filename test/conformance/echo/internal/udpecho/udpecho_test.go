package udpecho

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/gateway-api/conformance/utils/udp"

	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/config"
)

var pod = config.Pod{Namespace: "gateway-conformance-infra", Name: "udp-echo-by-port-7b-abc", Service: "udp-echo-by-port"}

func serve(t *testing.T) string {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, conn, pod, nil) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return conn.LocalAddr().String()
}

// TestSuiteClient is the suite's own UDP probe, with the backend checks
// the UDPRoute tests make.
func TestSuiteClient(t *testing.T) {
	addr := serve(t)
	udp.ExpectEchoResponseFromBackend(t, 30*time.Second, addr, udp.ExpectedResponse{Service: "udp-echo-by-port", Namespace: "gateway-conformance-infra"})
}

func TestEcho(t *testing.T) {
	addr := serve(t)
	conn, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A bound on a lost answer, so a failure ends instead of hanging.
	if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, sent string }{
		{"short", "hello"},
		{"json characters", `"quoted" \ and <tags>`},
		{"larger than echo-basic's 1024-byte buffer", strings.Repeat("x", 4000)},
	}
	buf := make([]byte, 65535)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := conn.Write([]byte(tc.sent)); err != nil {
				t.Fatal(err)
			}
			n, err := conn.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			var got Response
			if err := json.Unmarshal(buf[:n], &got); err != nil {
				t.Fatalf("answer %q: %v", buf[:n], err)
			}
			want := Response{Request: tc.sent, Namespace: pod.Namespace, Service: pod.Service, Pod: pod.Name}
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}
