// Package bodylimit refuses request bodies over a size with 413: at once
// when Content-Length says so, and while streaming otherwise, counting
// bytes as they pass and never buffering a whole body to check it.
package bodylimit

import (
	"net/http"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// Handler limits request bodies to Limit bytes before passing requests to
// Next. A Limit of 0 means no limit.
type Handler struct {
	Limit int64
	Next  exchange.Handler
}

// Serve answers 413 for a declared length over the limit and otherwise
// makes reading past the limit fail, which the proxy answers with 413.
func (h Handler) Serve(w http.ResponseWriter, x *exchange.Request) {
	r := x.HTTP
	if h.Limit > 0 && r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
		if r.ContentLength > h.Limit {
			TooLarge(w, r)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, h.Limit)
	}
	h.Next.Serve(w, x)
}

// TooLarge writes the 413 answer.
func TooLarge(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	if r.Method != http.MethodHead {
		w.Write([]byte("Request Entity Too Large: the request body is larger than this route allows\n"))
	}
}
