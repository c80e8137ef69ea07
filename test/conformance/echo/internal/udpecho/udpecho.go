// Package udpecho serves the conformance suite's UDP echo backend
// (UDPRoute tests): every datagram is answered, to its sender, with a JSON
// object holding the datagram as a string and the pod's identity.
package udpecho

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"

	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/config"
)

// Response is the answer to one datagram, with echo-basic's field names.
type Response struct {
	Request   string `json:"request"`
	Namespace string `json:"namespace"`
	Ingress   string `json:"ingress"`
	Service   string `json:"service"`
	Pod       string `json:"pod"`
}

// Serve answers datagrams on conn until ctx ends (then it returns nil) or
// conn fails. A datagram is read whole up to 65535 bytes. A nil log
// discards.
func Serve(ctx context.Context, conn net.PacketConn, pod config.Pod, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	buf := make([]byte, 65535)
	for {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		answer, err := json.Marshal(Response{
			Request: string(buf[:n]), Namespace: pod.Namespace, Ingress: pod.Ingress, Service: pod.Service, Pod: pod.Name,
		})
		if err != nil {
			continue
		}
		if _, err := conn.WriteTo(answer, from); err != nil {
			log.Info("udp answer", "to", from.String(), "error", err)
		}
	}
}
