package httpecho

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"time"
)

// H2C wraps h for the h2c listener: it answers requests that came over
// HTTP/2 (prior knowledge) or ask for an upgrade to h2c, and refuses plain
// HTTP/1.1 requests with 400, as echo-basic does.
func H2C(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 && r.Header.Get("Upgrade") != "h2c" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = fmt.Fprint(w, "Expected h2c request")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Kind is the protocol of one HTTP listener.
type Kind int

// The listeners of the HTTP mode.
const (
	// Plain serves HTTP/1.1.
	Plain Kind = iota
	// Cleartext serves HTTP/1.1 and HTTP/2 with prior knowledge (h2c).
	Cleartext
	// Secure serves HTTPS with ALPN h2 and http/1.1.
	Secure
)

// NewServer returns a server for h on a listener of kind k; tc is the TLS
// configuration of a Secure listener (nil otherwise). A Cleartext server
// answers every path with the echo, as echo-basic's h2c listener does.
// Serve it with Serve (Plain, Cleartext) or ServeTLS(l, "", "") (Secure).
func NewServer(h *Handler, k Kind, tc *tls.Config) *http.Server {
	s := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	switch k {
	case Cleartext:
		s.Protocols = new(http.Protocols)
		s.Protocols.SetHTTP1(true)
		s.Protocols.SetUnencryptedHTTP2(true)
		s.Handler = H2C(http.HandlerFunc(h.Echo))
	case Secure:
		s.TLSConfig = tc.Clone()
	}
	return s
}
