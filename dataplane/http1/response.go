package http1

import (
	"bufio"
	"fmt"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
)

// bufferBeforeChunking is how much of a body without a Content-Length is
// held back before the head is final: a handler that ends within it gets a
// Content-Length, a longer one a chunked body (net/http's size).
const bufferBeforeChunking = 2048

// response is the http.ResponseWriter of a request Server serves. It
// behaves as net/http's: a Content-Length for short bodies, chunked coding
// otherwise, sniffed Content-Type and Date when the handler sets none,
// trailers (declared or with http.TrailerPrefix), no body for HEAD, 1xx,
// 204 and 304, informational (1xx) heads sent at once. One response serves
// the requests of a connection in turn.
type response struct {
	sc     *serverConn
	req    *http.Request
	header http.Header
	body   *bufio.Writer // holds the body until the head is final; writes to writeChunk

	status        int
	wroteHeader   bool // a final status was set
	headDone      bool // the head's end was written
	handlerDone   bool
	chunking      bool
	closeAfter    bool
	contentLength int64 // declared or set, -1 for none
	written       int64 // body bytes the handler wrote

	// What the handler's header said at WriteHeader, for the end of the
	// head.
	hasType, hasEncoding, hasDate bool
	transferEncoding              string
	connection                    []string
	trailers                      []string // declared trailer names
	hasTrailers                   bool     // declared, or set with http.TrailerPrefix

	scratch []byte
}

// chunks is the io.Writer under response.body.
type chunks struct{ w *response }

func (c chunks) Write(p []byte) (int, error) { return c.w.writeChunk(p) }

func newResponse(sc *serverConn) *response {
	w := &response{sc: sc, header: make(http.Header)}
	w.body = bufio.NewWriterSize(chunks{w}, bufferBeforeChunking)
	return w
}

// reset readies w for req. The header map is the previous request's,
// cleared: a handler may not keep it after returning.
func (w *response) reset(req *http.Request) {
	clear(w.header)
	*w = response{sc: w.sc, req: req, header: w.header, body: w.body, contentLength: -1,
		trailers: w.trailers[:0], scratch: w.scratch[:0]}
}

// Header returns the header map of the response.
func (w *response) Header() http.Header { return w.header }

// WriteHeader sends an informational (1xx) head at once, or sets the
// status and writes the handler's fields of the head.
func (w *response) WriteHeader(code int) {
	if w.wroteHeader {
		w.sc.srv.logf("http1: superfluous WriteHeader(%d) after %d", code, w.status)
		return
	}
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	bw := w.sc.bw
	if code < 200 && code != http.StatusSwitchingProtocols {
		w.writeStatusLine(code)
		writeFields(bw, w.header, excludeNoBody)
		bw.WriteString("\r\n")
		bw.Flush()
		return
	}
	w.wroteHeader = true
	w.status = code
	h := w.header
	if cl := firstValue(h, "Content-Length"); cl != "" {
		if v, err := strconv.ParseInt(cl, 10, 64); err == nil && v >= 0 {
			w.contentLength = v
		} else {
			w.sc.srv.logf("http1: invalid Content-Length of %q", cl)
			delete(h, "Content-Length")
		}
	}
	w.transferEncoding = firstValue(h, "Transfer-Encoding")
	if w.transferEncoding != "" && w.transferEncoding != "identity" {
		w.contentLength = -1 // a Content-Length cannot go with chunked coding
	}
	_, w.hasType = h["Content-Type"]
	w.hasEncoding = firstValue(h, "Content-Encoding") != ""
	_, w.hasDate = h["Date"]
	w.connection = h["Connection"]
	for _, v := range h["Trailer"] {
		w.declareTrailers(v)
	}
	w.writeStatusLine(code)
	exclude := excludeAlways
	switch {
	case code == http.StatusNotModified:
		exclude = exclude304
	case !bodyAllowedForStatus(code):
		exclude = excludeNoBody
	case w.contentLength < 0:
		exclude = excludeUnknownLength
	}
	if writeFields(bw, h, exclude) {
		w.hasTrailers = true
	}
}

// firstValue is h.Get for a name known to be canonical: it skips the
// canonicalisation.
func firstValue(h http.Header, name string) string {
	if vv := h[name]; len(vv) > 0 {
		return vv[0]
	}
	return ""
}

func (w *response) declareTrailers(v string) {
	for _, name := range strings.Split(v, ",") {
		name = http.CanonicalHeaderKey(textproto.TrimString(name))
		if name != "" && httpguts.ValidTrailerHeader(name) {
			w.trailers = append(w.trailers, name)
			w.hasTrailers = true
		}
	}
}

func (w *response) writeStatusLine(code int) {
	w.sc.bw.WriteString(statusLine(code))
}

// statusLines are the status lines of the codes net/http has a text for,
// made once, indexed by code.
var statusLines = func() (lines [1000]string) {
	for code := 100; code <= 999; code++ {
		if text := http.StatusText(code); text != "" {
			lines[code] = "HTTP/1.1 " + strconv.Itoa(code) + " " + text + "\r\n"
		}
	}
	return lines
}()

// statusLine is the status line of code (100 to 999), as net/http writes
// it.
func statusLine(code int) string {
	if line := statusLines[code]; line != "" {
		return line
	}
	return "HTTP/1.1 " + strconv.Itoa(code) + " status code " + strconv.Itoa(code) + "\r\n"
}

// cachedDate is the Date field of the current second: formatted once a
// second, not for every answer.
type cachedDate struct {
	unix  int64
	value string
}

var currentDate atomic.Pointer[cachedDate]

// dateField returns the Date value for now.
func dateField(now time.Time) string {
	if d := currentDate.Load(); d != nil && d.unix == now.Unix() {
		return d.value
	}
	d := &cachedDate{unix: now.Unix(), value: now.UTC().Format(http.TimeFormat)}
	currentDate.Store(d)
	return d.value
}

// Write writes body bytes, after a 200 head if none was set.
func (w *response) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !bodyAllowedForStatus(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	w.written += int64(len(p))
	if w.contentLength >= 0 && w.written > w.contentLength {
		return 0, http.ErrContentLength
	}
	return w.body.Write(p)
}

// WriteString is Write for a string.
func (w *response) WriteString(s string) (int, error) {
	return w.Write([]byte(s))
}

// Flush sends the head and the body so far to the client.
func (w *response) Flush() { w.FlushError() }

// FlushError is Flush with its error, for http.ResponseController.
func (w *response) FlushError() error {
	if err := w.flushBody(); err != nil {
		return err
	}
	return w.sc.bw.Flush()
}

// flushBody writes the held-back body to the connection's buffer, after the
// head (a 200 one if none was set), which it ends if no body byte did.
func (w *response) flushBody() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if err := w.body.Flush(); err != nil {
		return err
	}
	if !w.headDone {
		w.endHead(nil)
	}
	return nil
}

// writeChunk is where body bytes leave the buffer: the head is ended with
// the first of them, then they are written as they are or as one chunk.
func (w *response) writeChunk(p []byte) (int, error) {
	if !w.headDone {
		w.endHead(p)
	}
	if w.req.Method == http.MethodHead || len(p) == 0 {
		return len(p), nil
	}
	bw := w.sc.bw
	if !w.chunking && bw.Buffered() > 0 && len(p) > bw.Available() {
		// The head and a body chunk too large for the buffer: one
		// system call for both, where bufio would make two.
		return len(p), w.sc.out.flushWith(bw, p)
	}
	if w.chunking {
		w.scratch = strconv.AppendUint(w.scratch[:0], uint64(len(p)), 16)
		w.scratch = append(w.scratch, "\r\n"...)
		bw.Write(w.scratch)
	}
	n, err := bw.Write(p)
	if err == nil && w.chunking {
		_, err = bw.WriteString("\r\n")
	}
	return n, err
}

// endHead writes the fields net/http adds (Content-Length of a finished
// short body, Content-Type, Date, Transfer-Encoding, Connection) and the
// blank line. p is the first body data, all of it when the handler is done.
func (w *response) endHead(p []byte) {
	w.headDone = true
	bw := w.sc.bw
	isHEAD := w.req.Method == http.MethodHead
	bodyAllowed := bodyAllowedForStatus(w.status)
	hasTE := w.transferEncoding != ""
	if w.handlerDone && !w.hasTrailers && !hasTE && bodyAllowed && w.contentLength < 0 && (!isHEAD || len(p) > 0) {
		w.contentLength = int64(len(p))
		w.field("Content-Length", strconv.AppendInt(w.scratch[:0], w.contentLength, 10))
	}
	if bodyAllowed && !w.hasType && !w.hasEncoding && !hasTE && len(p) > 0 {
		w.field("Content-Type", append(w.scratch[:0], http.DetectContentType(p)...))
	}
	if !w.hasDate {
		w.field("Date", append(w.scratch[:0], dateField(time.Now())...))
	}
	switch {
	case isHEAD || !bodyAllowed || w.status == http.StatusNoContent || w.contentLength >= 0:
	case w.transferEncoding == "identity":
		w.closeAfter = true // the body ends with the connection
	default:
		w.chunking = true
		bw.WriteString("Transfer-Encoding: chunked\r\n")
	}
	if w.req.Close || httpguts.HeaderValuesContainsToken(w.connection, "close") || !w.sc.srv.keepAlives() {
		w.closeAfter = true
	}
	if w.closeAfter {
		bw.WriteString("Connection: close\r\n")
	} else {
		for _, v := range w.connection {
			if httpguts.ValidHeaderFieldValue(v) {
				w.field("Connection", append(w.scratch[:0], textproto.TrimString(v)...))
			}
		}
	}
	bw.WriteString("\r\n")
}

func (w *response) field(name string, value []byte) {
	bw := w.sc.bw
	bw.WriteString(name)
	bw.WriteString(": ")
	bw.Write(value)
	bw.WriteString("\r\n")
	w.scratch = value[:0]
}

// finish ends the response after the handler returned: the rest of the
// body, the last chunk with the trailers, and the flush.
func (w *response) finish() error {
	w.handlerDone = true
	if err := w.flushBody(); err != nil {
		return err
	}
	bw := w.sc.bw
	if w.chunking {
		bw.WriteString("0\r\n")
		w.writeTrailers()
		bw.WriteString("\r\n")
	}
	if w.contentLength >= 0 && w.written != w.contentLength && w.req.Method != http.MethodHead && bodyAllowedForStatus(w.status) {
		w.closeAfter = true // the client waits for the bytes that were not sent
	}
	return bw.Flush()
}

func (w *response) writeTrailers() {
	bw := w.sc.bw
	for k, vv := range w.header {
		if name, ok := strings.CutPrefix(k, http.TrailerPrefix); ok {
			writeValues(bw, name, vv)
		}
	}
	for _, name := range w.trailers {
		writeValues(bw, name, w.header[name])
	}
}

// exclusion is the set of fields of the handler's header map that a head
// leaves out: net/http's hop-by-hop framing always, and what endHead
// writes itself or the status forbids.
type exclusion uint8

const (
	excludeLength exclusion = 1 << iota // Content-Length
	excludeType                         // Content-Type

	excludeAlways        exclusion = 0 // Transfer-Encoding and Connection
	excludeUnknownLength           = excludeLength
	excludeNoBody                  = excludeLength
	exclude304                     = excludeLength | excludeType
)

// excludes reports whether a head with exclusion e leaves out the field.
func (e exclusion) excludes(name string) bool {
	switch name {
	case "Transfer-Encoding", "Connection":
		return true
	case "Content-Length":
		return e&excludeLength != 0
	case "Content-Type":
		return e&excludeType != 0
	}
	return false
}

// writeFields writes the fields of h but the excluded ones and those named
// with http.TrailerPrefix, and reports whether there were such.
func writeFields(bw *bufio.Writer, h http.Header, exclude exclusion) (trailerPrefixed bool) {
	for name, vv := range h {
		if strings.HasPrefix(name, http.TrailerPrefix) {
			trailerPrefixed = true
			continue
		}
		if exclude.excludes(name) {
			continue
		}
		writeValues(bw, name, vv)
	}
	return trailerPrefixed
}

// writeValues writes one field line per value, as net/http does: names
// that are not valid are dropped, CR and LF in values become spaces.
func writeValues(bw *bufio.Writer, name string, values []string) {
	if !httpguts.ValidHeaderFieldName(name) {
		return
	}
	for _, v := range values {
		if strings.IndexByte(v, '\r') >= 0 || strings.IndexByte(v, '\n') >= 0 {
			v = newlineToSpace.Replace(v)
		}
		bw.WriteString(name)
		bw.WriteString(": ")
		bw.WriteString(textproto.TrimString(v))
		bw.WriteString("\r\n")
	}
}

var newlineToSpace = strings.NewReplacer("\n", " ", "\r", " ")

// bodyAllowedForStatus reports whether a response with status may have a
// body (RFC 9110: not 1xx, 204 or 304).
func bodyAllowedForStatus(status int) bool {
	switch {
	case status >= 100 && status <= 199:
		return false
	case status == http.StatusNoContent, status == http.StatusNotModified:
		return false
	}
	return true
}
