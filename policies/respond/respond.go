// Package respond is the route action that answers with a fixed status,
// content type and body.
package respond

import (
	"net/http"
	"strconv"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// DefaultContentType is the content type of a body without one.
const DefaultContentType = "text/plain; charset=utf-8"

// Handler answers every request with the same response.
type Handler struct {
	status      int
	contentType string
	length      string
	body        []byte
}

// New returns a Handler; an empty content type means DefaultContentType.
func New(status int, contentType, body string) *Handler {
	if contentType == "" {
		contentType = DefaultContentType
	}
	return &Handler{status: status, contentType: contentType, length: strconv.Itoa(len(body)), body: []byte(body)}
}

// Serve writes the response (without a body for HEAD).
func (h *Handler) Serve(w http.ResponseWriter, x *exchange.Request) {
	header := w.Header()
	header.Set("Content-Type", h.contentType)
	header.Set("Content-Length", h.length)
	w.WriteHeader(h.status)
	if x.HTTP.Method != http.MethodHead {
		w.Write(h.body)
	}
}
