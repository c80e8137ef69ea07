// Package httpecho answers HTTP requests the way the Gateway API conformance
// suite's echo-basic backend does: a JSON description of the request as it
// arrived (which the suite's round tripper parses), plus the few paths the
// suite uses to make a backend misbehave on purpose.
//
// Paths (after "//" is folded to "/", as echo-basic does):
//
//	/health          200 "OK"
//	/status/NNN      the status NNN, no body; anything else under /status/ 400
//	/retry/...       fails the first succeedAfter tries of one uuid, then echoes
//	/ws              WebSocket: every message comes back with its frame type
//	anything else    the echo
//
// Every echo honours ?delay=<duration> (Go syntax) before answering, and
// the request header X-Echo-Set-Header: "Name: value, Other: value" sets
// those response headers.
package httpecho

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/certs"
	"github.com/ramjet-dev/ramjet/test/conformance/echo/internal/config"
)

// Request is the echo body: the fields of the suite's CapturedRequest, in
// echo-basic's order and names.
type Request struct {
	Path     string              `json:"path"`
	Host     string              `json:"host"`
	Method   string              `json:"method"`
	Proto    string              `json:"proto"`
	Headers  map[string][]string `json:"headers"`
	HTTPPort string              `json:"httpPort"`

	Namespace string `json:"namespace"`
	Ingress   string `json:"ingress"`
	Service   string `json:"service"`
	Pod       string `json:"pod"`

	TLS *TLS `json:"tls,omitempty"`
}

// TLS describes the connection of a request that came over TLS.
type TLS struct {
	Version            string   `json:"version"`
	PeerCertificates   []string `json:"peerCertificates,omitempty"`
	ServerName         string   `json:"serverName"`
	NegotiatedProtocol string   `json:"negotiatedProtocol,omitempty"`
	CipherSuite        string   `json:"cipherSuite"`
}

// Handler is the echo server's HTTP handler, the same on the HTTP, HTTPS
// and (behind H2C) h2c listeners. Build it with New.
type Handler struct {
	pod      config.Pod
	httpPort string
	retries  *retries
	ws       http.Handler
	log      *slog.Logger
}

var _ http.Handler = (*Handler)(nil)

// New returns a Handler that reports pod and httpPort (the value of
// HTTP_PORT, echoed on every listener as echo-basic does). A nil log
// discards.
func New(pod config.Pod, httpPort string, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{pod: pod, httpPort: httpPort, retries: newRetries(), ws: webSocket(log), log: log}
}

// ServeHTTP routes by path.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := strings.ReplaceAll(r.URL.Path, "//", "/")
	switch {
	case p == "/health":
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("OK"))
	case p == "/ws":
		h.ws.ServeHTTP(w, r)
	case strings.HasPrefix(p, "/status/"):
		w.WriteHeader(statusCode(r.RequestURI))
	case strings.HasPrefix(p, "/retry/"):
		h.retry(w, r)
	default:
		h.Echo(w, r)
	}
}

// statusCode is NNN of a request target that is exactly /status/NNN (no
// query), else 400. Codes below 100 cannot be sent and give 400 too.
func statusCode(target string) int {
	digits, ok := strings.CutPrefix(target, "/status/")
	if !ok || len(digits) != 3 {
		return http.StatusBadRequest
	}
	n := 0
	for _, c := range []byte(digits) {
		if c < '0' || c > '9' {
			return http.StatusBadRequest
		}
		n = n*10 + int(c-'0')
	}
	if n < 100 {
		return http.StatusBadRequest
	}
	return n
}

// Echo answers with the JSON description of r, after the delay it asks for.
// It logs the line the suite's mirror tests look for in the pod's log
// ("Echoing back request made to PATH to client (ADDRESS)", as echo-basic).
func (h *Handler) Echo(w http.ResponseWriter, r *http.Request) {
	h.log.Info("Echoing back request made to " + r.RequestURI + " to client (" + r.RemoteAddr + ")")
	if err := delay(r, "delay"); err != nil {
		fail(w, err)
		return
	}
	body, err := json.MarshalIndent(h.describe(r), "", " ")
	if err != nil {
		fail(w, err)
		return
	}
	setEchoHeaders(w.Header(), r.Header.Values("X-Echo-Set-Header"))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(body)
}

func (h *Handler) describe(r *http.Request) Request {
	d := Request{
		Path:      r.RequestURI,
		Host:      r.Host,
		Method:    r.Method,
		Proto:     r.Proto,
		Headers:   r.Header,
		HTTPPort:  h.httpPort,
		Namespace: h.pod.Namespace,
		Ingress:   h.pod.Ingress,
		Service:   h.pod.Service,
		Pod:       h.pod.Name,
	}
	if s := r.TLS; s != nil {
		d.TLS = &TLS{
			Version:            certs.VersionName(s.Version),
			PeerCertificates:   certs.PeerPEM(s),
			ServerName:         s.ServerName,
			NegotiatedProtocol: s.NegotiatedProtocol,
			CipherSuite:        tls.CipherSuiteName(s.CipherSuite),
		}
	}
	return d
}

// delay waits for the duration of the query parameter key, if there is
// one, or until the client goes away.
func delay(r *http.Request, key string) error {
	v := r.URL.Query().Get(key)
	if v == "" {
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-r.Context().Done():
		return r.Context().Err()
	}
}

// fail answers 500 with {"message": ...}, as echo-basic does.
func fail(w http.ResponseWriter, err error) {
	body, _ := json.Marshal(struct {
		Message string `json:"message"`
	}{err.Error()})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = w.Write(body)
}
