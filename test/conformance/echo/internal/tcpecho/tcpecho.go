// Package tcpecho serves the line protocol of the conformance suite's TCP
// echo backend (TCPRoute tests): on connect it sends a welcome line, then
// answers each line it reads — TEST with a JSON description of the pod and
// the connection, IS_TLS with true or false, PING with PONG — and ignores
// any other line.
package tcpecho

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/config"
)

// Welcome is the first line the server sends on every connection.
const Welcome = "Gateway API Test TCP Server\n"

// Assertions is the answer to TEST, with echo-basic's field names.
type Assertions struct {
	Namespace string `json:"namespace"`
	Ingress   string `json:"ingress"`
	Service   string `json:"service"`
	Pod       string `json:"pod"`
	TCPPort   string `json:"tcpport"`
	TLSPort   string `json:"tlsport,omitempty"`
	IsTLS     bool   `json:"isTLS"`
	TLS       *TLS   `json:"tls,omitempty"`
}

// TLS describes a TLS connection; Version is Go's name ("TLS 1.3"), as
// echo-basic's TCP server reports it.
type TLS struct {
	Version            string `json:"version"`
	ServerName         string `json:"serverName"`
	NegotiatedProtocol string `json:"negotiatedProtocol,omitempty"`
	Curves             string `json:"curves,omitempty"`
	CipherSuite        string `json:"cipherSuite"`
}

// Server answers connections for one pod. TCPPort and TLSPort are the
// configured ports, echoed in every TEST answer.
type Server struct {
	Pod              config.Pod
	TCPPort, TLSPort int
	// Log receives accept and handshake errors; nil discards.
	Log *slog.Logger
}

// Serve accepts connections on l until ctx ends or l fails; with tc set
// each connection is a TLS server connection with that configuration.
// It returns nil when ctx ended, after every connection has closed.
func (s *Server) Serve(ctx context.Context, l net.Listener, tc *tls.Config) error {
	log := s.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { _ = l.Close() })
	defer stop()
	for {
		conn, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				log.Warn("tcp accept", "error", err)
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		if tc != nil {
			conn = tls.Server(conn, tc)
		}
		wg.Go(func() { s.handle(ctx, conn, log) })
	}
}

func (s *Server) handle(ctx context.Context, conn net.Conn, log *slog.Logger) {
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	a := Assertions{
		Namespace: s.Pod.Namespace, Ingress: s.Pod.Ingress, Service: s.Pod.Service, Pod: s.Pod.Name,
		TCPPort: strconv.Itoa(s.TCPPort), TLSPort: strconv.Itoa(s.TLSPort),
	}
	if tc, ok := conn.(*tls.Conn); ok {
		if err := tc.HandshakeContext(ctx); err != nil {
			log.Info("tls handshake", "remote", conn.RemoteAddr().String(), "error", err)
			return
		}
		st := tc.ConnectionState()
		a.IsTLS = true
		a.TLS = &TLS{
			Version: tls.VersionName(st.Version), ServerName: st.ServerName, NegotiatedProtocol: st.NegotiatedProtocol,
			Curves: curve(st.CurveID), CipherSuite: tls.CipherSuiteName(st.CipherSuite),
		}
	}
	test, err := json.Marshal(a)
	if err != nil {
		return
	}
	w := bufio.NewWriter(conn)
	if _, err := w.WriteString(Welcome); err != nil || w.Flush() != nil {
		return
	}
	lines := bufio.NewScanner(conn)
	for lines.Scan() {
		var answer string
		switch lines.Text() {
		case "TEST":
			answer = string(test) + "\n"
		case "IS_TLS":
			answer = strconv.FormatBool(a.IsTLS) + "\n"
		case "PING":
			answer = "PONG\n"
		default:
			continue
		}
		if _, err := w.WriteString(answer); err != nil || w.Flush() != nil {
			return
		}
	}
}

// curve names the key exchange group; none (a resumed TLS 1.2 session)
// gives "".
func curve(id tls.CurveID) string {
	if id == 0 {
		return ""
	}
	return fmt.Sprint(id)
}
