// Package grpcecho serves the Gateway API conformance suite's gRPC echo
// service (gateway_api_conformance.echo_basic.grpcecho.GrpcEcho, whose
// generated Go package ships in the conformance module): Echo and EchoTwo
// answer with the method called, every metadata pair received, the
// :authority, the pod's identity and, over TLS, the connection's details;
// EchoThree is unimplemented on purpose.
package grpcecho

import (
	"context"
	"crypto/tls"
	"errors"
	"sort"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/reflection"
	pb "sigs.k8s.io/gateway-api/conformance/echo-basic/grpcechoserver"

	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/certs"
	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/config"
)

// NewServer returns a gRPC server with the echo service and server
// reflection registered. With tc set it serves TLS with that configuration
// (ALPN h2), else plaintext HTTP/2.
func NewServer(pod config.Pod, tc *tls.Config) *grpc.Server {
	var opts []grpc.ServerOption
	if tc != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(tc)))
	}
	s := grpc.NewServer(opts...)
	pb.RegisterGrpcEchoServer(s, &service{pod: &pb.Context{
		Namespace: pod.Namespace, Ingress: pod.Ingress, ServiceName: pod.Service, Pod: pod.Name,
	}})
	reflection.Register(s)
	return s
}

type service struct {
	pb.UnimplementedGrpcEchoServer
	pod *pb.Context
}

var _ pb.GrpcEchoServer = (*service)(nil)

// Echo answers with the assertions of this call.
func (s *service) Echo(ctx context.Context, _ *pb.EchoRequest) (*pb.EchoResponse, error) {
	return s.echo(ctx, pb.GrpcEcho_Echo_FullMethodName)
}

// EchoTwo is Echo at another method.
func (s *service) EchoTwo(ctx context.Context, _ *pb.EchoRequest) (*pb.EchoResponse, error) {
	return s.echo(ctx, pb.GrpcEcho_EchoTwo_FullMethodName)
}

func (s *service) echo(ctx context.Context, method string) (*pb.EchoResponse, error) {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok {
		return nil, errors.New("the call carries no metadata")
	}
	a := &pb.Assertions{FullyQualifiedMethod: method, Context: s.pod, Headers: headers(md)}
	if v := md.Get(":authority"); len(v) > 0 {
		a.Authority = v[0]
	}
	if p, ok := peer.FromContext(ctx); ok {
		if info, ok := p.AuthInfo.(credentials.TLSInfo); ok {
			a.TlsAssertions = tlsAssertions(&info.State)
		}
	}
	return &pb.EchoResponse{Assertions: a}, nil
}

// headers lists every metadata pair, sorted by key (values in the order
// received).
func headers(md metadata.MD) []*pb.Header {
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []*pb.Header
	for _, k := range keys {
		for _, v := range md[k] {
			out = append(out, &pb.Header{Key: k, Value: v})
		}
	}
	return out
}

func tlsAssertions(s *tls.ConnectionState) *pb.TLSAssertions {
	return &pb.TLSAssertions{
		Version:            certs.VersionName(s.Version),
		NegotiatedProtocol: s.NegotiatedProtocol,
		ServerName:         s.ServerName,
		CipherSuite:        tls.CipherSuiteName(s.CipherSuite),
		PeerCertificates:   certs.PeerPEM(s),
	}
}
