package proxy

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// BufferedBytesLimit is the default bound of the bytes the buffered bodies
// of a process (config.Buffering) hold at once: a body that would go
// beyond it streams instead.
const BufferedBytesLimit = config.ProcessBufferBytes

// BufferBudget bounds the memory of buffered bodies across routes. It
// takes no lock: one atomic add per buffered body.
type BufferBudget struct {
	used  atomic.Int64
	limit int64
}

// NewBufferBudget returns a budget of limit bytes.
func NewBufferBudget(limit int64) *BufferBudget { return &BufferBudget{limit: limit} }

// take reserves n bytes; false, reserving nothing, when they would go
// beyond the limit.
func (b *BufferBudget) take(n int64) bool {
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		return false
	}
	return true
}

// give returns n reserved bytes.
func (b *BufferBudget) give(n int64) { b.used.Add(-n) }

// Used returns the bytes reserved now.
func (b *BufferBudget) Used() int64 { return b.used.Load() }

// reserve takes n bytes of the budget for this forwarding, released when it
// ends.
func (f *forwarding) reserve(n int64) bool {
	if !f.h.budget.take(n) {
		return false
	}
	f.reserved += n
	return true
}

// release gives back what the forwarding reserved.
func (f *forwarding) release() {
	if f.reserved > 0 {
		f.h.budget.give(f.reserved)
		f.reserved = 0
	}
}

// readBody reads the client's body for the tries: under request buffering
// the whole body up to the route's bound (the rest, if any, streams after
// the part read), otherwise as newRequestBody.
func (f *forwarding) readBody() (*requestBody, error) {
	r := f.x.HTTP
	limit := f.h.route.BufferRequest
	if limit <= 0 || r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 ||
		(r.ContentLength > 0 && r.ContentLength <= ReplayBodyLimit) {
		return newRequestBody(r)
	}
	want := limit
	if r.ContentLength > 0 {
		want = min(r.ContentLength, limit)
	}
	if !f.reserve(want) {
		return newRequestBody(r) // the process's bound: stream
	}
	var buf bytes.Buffer
	buf.Grow(int(min(want, 32<<10)))
	n, err := buf.ReadFrom(io.LimitReader(r.Body, want))
	if err != nil {
		return nil, clientBodyError(err)
	}
	switch {
	case r.ContentLength > 0 && n < want:
		return nil, errClientBody
	case r.ContentLength == n, r.ContentLength < 0 && n < want:
		return &requestBody{replay: buf.Bytes()}, nil // whole
	}
	// Larger than the bound: what was read goes first, the rest streams.
	return &requestBody{streamed: &countingBody{src: &prefixedBody{prefix: bytes.NewReader(buf.Bytes()), rest: r.Body}}}, nil
}

// prefixedBody reads prefix, then rest.
type prefixedBody struct {
	prefix *bytes.Reader
	rest   io.ReadCloser
}

func (p *prefixedBody) Read(b []byte) (int, error) {
	if p.prefix.Len() > 0 {
		return p.prefix.Read(b)
	}
	return p.rest.Read(b)
}

func (p *prefixedBody) Close() error { return p.rest.Close() }

// bufferable reports whether an answer may be buffered: not a stream
// (gRPC, server-sent events) and not refused by the member with
// X-Accel-Buffering: no, as nginx honours it.
func bufferable(resp *http.Response) bool {
	if strings.EqualFold(resp.Header.Get("X-Accel-Buffering"), "no") {
		return false
	}
	ct := resp.Header.Get("Content-Type")
	return !strings.HasPrefix(ct, "text/event-stream") && !strings.HasPrefix(ct, "application/grpc")
}

// bufferAnswer reads the member's body up to the route's bound. whole
// says the body ended within it (its trailers are then in resp.Trailer);
// an error is the member's, with nothing sent to the client yet.
func (f *forwarding) bufferAnswer(resp *http.Response) (data []byte, whole bool, err error) {
	want := f.h.route.BufferResponse
	if resp.ContentLength >= 0 {
		want = min(resp.ContentLength, want)
	}
	if !f.reserve(want + 1) {
		return nil, false, nil
	}
	var buf bytes.Buffer
	buf.Grow(int(min(want+1, 32<<10)))
	// One byte more than the bound tells a body that ends at it from a
	// longer one.
	n, err := buf.ReadFrom(io.LimitReader(resp.Body, want+1))
	if err != nil {
		return nil, false, err
	}
	// Read to its end, the transport saw the EOF and may reuse the
	// connection.
	whole = resp.ContentLength < 0 && n <= want || resp.ContentLength >= 0 && n == resp.ContentLength
	return buf.Bytes(), whole, nil
}

// setLength announces the length of a whole buffered answer that had none.
func setLength(h http.Header, resp *http.Response, n int) {
	if resp.ContentLength < 0 && len(resp.Trailer) == 0 {
		h.Set("Content-Length", strconv.Itoa(n))
	}
}
