package http1

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/textproto"
	"syscall"

	"golang.org/x/net/http/httpguts"
)

// defaultUserAgent is what net/http sends when a request has no
// User-Agent header; an empty one sends none.
const defaultUserAgent = "Go-http-client/1.1"

var (
	errInvalidHost        = errors.New("http1: invalid Host header")
	errInvalidHeaderName  = errors.New("http1: invalid header field name")
	errInvalidHeaderValue = errors.New("http1: invalid header field value")
)

// writeRequest writes the head of a request without a body into w, with
// the fields net/http's Transport would write; the caller flushes it. A
// Host that is not valid is an error (net/http would send an empty one).
func writeRequest(w *bufio.Writer, req *http.Request) error {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	if !httpguts.ValidHostHeader(host) {
		return errInvalidHost
	}
	w.WriteString(req.Method)
	w.WriteByte(' ')
	writeRequestURI(w, req)
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(host)
	w.WriteString("\r\n")
	ua := defaultUserAgent
	if v, ok := req.Header["User-Agent"]; ok {
		ua = ""
		if len(v) > 0 {
			ua = v[0]
		}
	}
	if ua != "" {
		if err := writeField(w, "User-Agent", ua); err != nil {
			return err
		}
	}
	for name, values := range req.Header {
		if excludedHeader(name) {
			continue
		}
		if !httpguts.ValidHeaderFieldName(name) {
			return errInvalidHeaderName
		}
		for _, v := range values {
			if err := writeField(w, name, v); err != nil {
				return err
			}
		}
	}
	_, err := w.WriteString("\r\n")
	return err
}

// writeRequestURI writes the request target: the escaped path (or "/")
// and the query, without allocating for the usual path.
func writeRequestURI(w *bufio.Writer, req *http.Request) {
	u := req.URL
	if u.Opaque != "" {
		w.WriteString(u.RequestURI())
		return
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	w.WriteString(path)
	if u.ForceQuery || u.RawQuery != "" {
		w.WriteByte('?')
		w.WriteString(u.RawQuery)
	}
}

func writeField(w *bufio.Writer, name, value string) error {
	if !httpguts.ValidHeaderFieldValue(value) {
		return errInvalidHeaderValue
	}
	w.WriteString(name)
	w.WriteString(": ")
	w.WriteString(textproto.TrimString(value))
	w.WriteString("\r\n")
	return nil
}

// excludedHeader reports the headers net/http writes itself or never
// sends from Request.Header.
func excludedHeader(name string) bool {
	switch name {
	case "Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer":
		return true
	}
	return false
}

// isClosedConn reports whether err is the member's end of the connection:
// the sign of a kept-alive connection it closed while idle.
func isClosedConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
