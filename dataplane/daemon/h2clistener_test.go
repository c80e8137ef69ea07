package daemon

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// grpcH2CConfig serves grpc.test on a plain listener that takes h2c, from
// an h2c pool.
const grpcH2CConfig = `
server:
  listeners:
    h2c: {address: "127.0.0.1:0", h2c: true}
  health: {address: "127.0.0.1:0"}
  admin: {socket: "{{.Dir}}/admin.sock"}
tenants:
  rpc:
    applications:
` + `      grpc:
        domains: [grpc.test]
        routes:
          - match: {path: {prefix: /}}
            action: {pool: h2c}
    pools:
      h2c: {scheme: h2c, members: ["{{.H2C}}"]}
`

// TestGRPCClientOverH2CListener: a real gRPC client (grpc-go, cleartext)
// makes several calls on one connection to an h2c listener, each
// answered by a real gRPC server behind an h2c pool, as the Gateway API's
// GRPCRoute conformance tests do.
func TestGRPCClientOverH2CListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	td := startDaemon(t, grpcH2CConfig, map[string]any{"H2C": ln.Addr().String()})

	conn, err := grpc.NewClient(td.bound.get("h2c"), grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithAuthority("grpc.test"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	for i := range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("call %d: %v, %v; want SERVING", i+1, resp, err)
		}
	}
}
