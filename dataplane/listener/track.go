package listener

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
)

// ErrAmbiguousFraming is wrapped by every error of Guard.Verdict.
var ErrAmbiguousFraming = errors.New("ambiguous request framing")

// problem is why the guard refuses a request; none means it does not.
type problem uint8

const (
	none problem = iota
	obsFold
	badContentLength
	differingContentLength
	lengthAndChunked
	notChunked
	chunkedHTTP10
	lostTrack
)

var problemErrs = [...]error{
	none:                   nil,
	obsFold:                framingError("obsolete line folding in the header"),
	badContentLength:       framingError("invalid Content-Length"),
	differingContentLength: framingError("differing Content-Length values"),
	lengthAndChunked:       framingError("Content-Length together with Transfer-Encoding"),
	notChunked:             framingError("Transfer-Encoding other than chunked"),
	chunkedHTTP10:          framingError("Transfer-Encoding in an HTTP/1.0 request"),
	lostTrack:              framingError("request boundaries could not be followed"),
}

func framingError(what string) error {
	return fmt.Errorf("%w: %s", ErrAmbiguousFraming, what)
}

// state is the part of a request the tracker is in.
type state uint8

const (
	inHead      state = iota // request line and header lines
	inBody                   // Content-Length body
	inChunkSize              // chunk-size line
	inChunkData              // chunk data
	inChunkEnd               // CRLF after chunk data
	inTrailer                // trailer lines after the last chunk
	off                      // not following the stream any more
)

// keptLine is the largest line buffer kept for the next split line.
const keptLine = 4096

// tracker follows request boundaries in an HTTP/1.x request stream the way
// net/http's server reads them. Only stop is shared between goroutines; the
// other fields belong to the reader (net/http never reads concurrently).
type tracker struct {
	// stop is (index+1)<<8 | problem for the first refused request, 0 while
	// there is none.
	stop atomic.Uint64

	state   state
	max     int    // longest head, chunk-size line or trailer
	size    int    // bytes of the current head, chunk-size line or trailer
	partial []byte // start of a line split across reads
	remain  uint64 // body or chunk-data bytes still to skip
	crlf    int    // bytes of the CRLF after chunk data seen so far
	skip    int    // leading CR or LF bytes still tolerated (after a POST)
	next    uint64 // index of the request whose head is read next
	h       head   // what the current head said
}

// head holds what the header of one request said about its framing.
type head struct {
	lines       int
	optionsStar bool // OPTIONS *, which net/http answers without the handler
	post        bool
	connect     bool
	http10      bool
	upgrade     bool // non-empty Upgrade
	connUpgrade bool // Connection has the token upgrade
	clCount     int
	cl          uint64
	clDigits    int
	clInvalid   bool
	clDiffer    bool
	teCount     int
	teOther     bool // some Transfer-Encoding is not "chunked"
}

// verdict returns the error for the request at index i.
func (t *tracker) verdict(i uint64) error {
	s := t.stop.Load()
	if s == 0 || i < s>>8-1 {
		return nil
	}
	return problemErrs[s&0xff]
}

// feed follows p, the next bytes of the stream.
func (t *tracker) feed(p []byte) {
	for len(p) > 0 {
		switch t.state {
		case off:
			return
		case inBody, inChunkData:
			p = t.skipData(p)
		case inChunkEnd:
			p = t.chunkEnd(p)
		default:
			p = t.nextLine(p)
		}
	}
}

// halt refuses the request at index next and all later ones, and stops
// following the stream.
func (t *tracker) halt(p problem) {
	t.stop.Store((t.next+1)<<8 | uint64(p))
	t.state = off
	t.partial = nil
}

// begin enters a line-based state.
func (t *tracker) begin(s state) {
	t.state = s
	t.size = 0
}

func (t *tracker) startHead() {
	// net/http skips up to four CR or LF bytes before a request that
	// follows a POST.
	t.skip = 0
	if t.h.post {
		t.skip = 4
	}
	t.h = head{}
	t.begin(inHead)
}

func (t *tracker) skipData(p []byte) []byte {
	n := min(uint64(len(p)), t.remain)
	t.remain -= n
	switch {
	case t.remain > 0:
	case t.state == inBody:
		t.startHead()
	default:
		t.state = inChunkEnd
		t.crlf = 0
	}
	return p[n:]
}

func (t *tracker) chunkEnd(p []byte) []byte {
	if p[0] != "\r\n"[t.crlf] {
		t.halt(lostTrack)
		return nil
	}
	t.crlf++
	if t.crlf == 2 {
		t.begin(inChunkSize)
	}
	return p[1:]
}

// nextLine consumes p up to and including the next LF, handing a complete
// line (without its LF) to line and keeping an incomplete one for later.
func (t *tracker) nextLine(p []byte) []byte {
	if t.skip > 0 {
		p = t.skipLeading(p)
	}
	i := bytes.IndexByte(p, '\n')
	n := i + 1
	if i < 0 {
		n = len(p)
	}
	if t.size += n; t.size > t.max {
		t.halt(lostTrack)
		return nil
	}
	if i < 0 {
		t.partial = append(t.partial, p...)
		return nil
	}
	line := p[:i]
	if len(t.partial) > 0 {
		t.partial = append(t.partial, line...)
		line = t.partial
	}
	t.line(line)
	t.partial = t.partial[:0]
	if cap(t.partial) > keptLine {
		t.partial = nil
	}
	return p[n:]
}

func (t *tracker) skipLeading(p []byte) []byte {
	for t.skip > 0 && len(p) > 0 && (p[0] == '\r' || p[0] == '\n') {
		p = p[1:]
		t.skip--
	}
	if len(p) > 0 {
		t.skip = 0
	}
	return p
}

func (t *tracker) line(raw []byte) {
	switch t.state {
	case inHead:
		t.headLine(trimCR(raw))
	case inChunkSize:
		t.chunkSizeLine(raw)
	case inTrailer:
		if len(trimCR(raw)) == 0 {
			t.startHead()
		}
	}
}

func (t *tracker) headLine(line []byte) {
	t.h.lines++
	switch {
	case t.h.lines == 1:
		t.requestLine(line)
	case len(line) == 0:
		t.endHead()
	case line[0] == ' ' || line[0] == '\t':
		t.halt(obsFold)
	default:
		t.h.field(line)
	}
}

func (t *tracker) requestLine(line []byte) {
	method, rest, ok1 := cut(line, ' ')
	target, proto, ok2 := cut(rest, ' ')
	if !ok1 || !ok2 {
		t.halt(lostTrack) // net/http refuses it too
		return
	}
	t.h.optionsStar = string(method) == "OPTIONS" && string(target) == "*"
	t.h.post = string(method) == "POST"
	t.h.connect = string(method) == "CONNECT"
	t.h.http10 = string(proto) == "HTTP/1.0"
}

func (t *tracker) endHead() {
	if p := t.h.problem(); p != none {
		t.halt(p)
		return
	}
	// The handler never asks about OPTIONS *, unless the server sets
	// DisableGeneralOptionsHandler: then its count runs ahead of the
	// guard's, which can refuse a request early but never lets one by.
	if !t.h.optionsStar {
		t.next++
	}
	switch {
	case t.h.connect || t.h.upgrade && t.h.connUpgrade:
		// The stream may stop being HTTP. A later request on this
		// connection can only reach the handler if the protocol did not
		// switch, and then the tracker no longer knows where it starts:
		// refuse it (ramjetd also closes such connections after the
		// answer, so well-behaved clients never meet this).
		t.halt(lostTrack)
	case t.h.teCount > 0:
		t.begin(inChunkSize)
	case t.h.cl > 0:
		t.remain = t.h.cl
		t.state = inBody
	default:
		t.startHead()
	}
}

func (t *tracker) chunkSizeLine(raw []byte) {
	n, ok := chunkSize(raw)
	switch {
	case !ok:
		t.halt(lostTrack)
	case n == 0:
		t.begin(inTrailer)
	default:
		t.remain = n
		t.state = inChunkData
	}
}

// field records a header field line.
func (h *head) field(line []byte) {
	if v, ok := fieldValue(line, "content-length"); ok {
		h.contentLength(v)
	}
	if v, ok := fieldValue(line, "transfer-encoding"); ok {
		h.teCount++
		h.teOther = h.teOther || !equalFold(v, "chunked")
	}
	if v, ok := fieldValue(line, "upgrade"); ok {
		h.upgrade = h.upgrade || len(v) > 0
	}
	if v, ok := fieldValue(line, "connection"); ok {
		h.connUpgrade = h.connUpgrade || hasToken(v, "upgrade")
	}
}

// fieldValue returns the value of the field line if its name is the
// lower-case name, ignoring ASCII case. (A line without a colon, which
// net/http refuses, has no name.)
func fieldValue(line []byte, name string) ([]byte, bool) {
	n := len(name)
	if len(line) <= n || line[n] != ':' || !equalFold(line[:n], name) {
		return nil, false
	}
	return trimOWS(line[n+1:]), true
}

func (h *head) contentLength(v []byte) {
	n, ok := parseLength(v)
	switch {
	case !ok:
		h.clInvalid = true
	case h.clCount == 0:
		h.cl, h.clDigits = n, len(v)
	case n != h.cl || len(v) != h.clDigits:
		h.clDiffer = true // net/http compares the strings
	}
	h.clCount++
}

func (h *head) problem() problem {
	switch {
	case h.clInvalid:
		return badContentLength
	case h.clDiffer:
		return differingContentLength
	case h.clCount > 0 && h.teCount > 0:
		return lengthAndChunked
	case h.teOther || h.teCount > 1:
		return notChunked
	case h.teCount > 0 && h.http10:
		// net/http ignores Transfer-Encoding in HTTP/1.0; RFC 9112 6.1
		// calls such framing faulty.
		return chunkedHTTP10
	}
	return none
}

// parseLength parses a Content-Length value as net/http does: decimal
// digits only, at most math.MaxInt64.
func parseLength(v []byte) (uint64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	var n uint64
	for _, c := range v {
		d := uint64(c - '0')
		if c < '0' || c > '9' || n > (math.MaxInt64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// chunkSize parses a chunk-size line (without its LF) as net/http does: it
// ends in CR with no other CR, trailing blanks and then any extension are
// dropped, and 1 to 16 hex digits remain.
func chunkSize(raw []byte) (uint64, bool) {
	end := len(raw) - 1
	if end < 0 || raw[end] != '\r' || bytes.IndexByte(raw[:end], '\r') >= 0 {
		return 0, false
	}
	digits, _, _ := cut(trimRightOWS(raw[:end]), ';')
	if len(digits) == 0 || len(digits) > 16 {
		return 0, false
	}
	var n uint64
	for _, c := range digits {
		d, ok := hexDigit(c)
		if !ok {
			return 0, false
		}
		n = n<<4 | d
	}
	return n, true
}

func hexDigit(c byte) (uint64, bool) {
	switch {
	case '0' <= c && c <= '9':
		return uint64(c - '0'), true
	case 'a' <= c && c <= 'f':
		return uint64(c - 'a' + 10), true
	case 'A' <= c && c <= 'F':
		return uint64(c - 'A' + 10), true
	}
	return 0, false
}

func cut(s []byte, sep byte) (before, after []byte, found bool) {
	if i := bytes.IndexByte(s, sep); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, nil, false
}

func trimCR(s []byte) []byte {
	if n := len(s); n > 0 && s[n-1] == '\r' {
		return s[:n-1]
	}
	return s
}

func isOWS(c byte) bool { return c == ' ' || c == '\t' }

func trimRightOWS(s []byte) []byte {
	for len(s) > 0 && isOWS(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

func trimOWS(s []byte) []byte {
	for len(s) > 0 && isOWS(s[0]) {
		s = s[1:]
	}
	return trimRightOWS(s)
}

// equalFold reports whether s equals the lower-case ASCII string lower,
// ignoring ASCII case.
func equalFold(s []byte, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// hasToken reports whether the comma-separated list v holds the lower-case
// token, ignoring ASCII case.
func hasToken(v []byte, token string) bool {
	for len(v) > 0 {
		var item []byte
		item, v, _ = cut(v, ',')
		if equalFold(trimOWS(item), token) {
			return true
		}
	}
	return false
}
