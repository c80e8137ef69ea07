package proxy

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"sync/atomic"
)

// requestBody is the client's request body as the tries send it: kept in
// memory when small enough to be sent again, streamed otherwise.
type requestBody struct {
	replay   []byte // the whole body, when kept; non-nil and empty for no body
	streamed *countingBody
}

// noRequestBody is the body of every request without one; nothing
// changes it.
var noRequestBody = &requestBody{replay: []byte{}}

// newRequestBody reads a small body of known length into memory. A client
// that fails to send it, or sends more than the body limit, gets an error.
func newRequestBody(r *http.Request) (*requestBody, error) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return noRequestBody, nil
	}
	if r.ContentLength > 0 && r.ContentLength <= ReplayBodyLimit {
		// Grown as the bytes arrive: a client that announces a body and
		// sends nothing holds no memory for it.
		var buf bytes.Buffer
		buf.Grow(int(min(r.ContentLength, 4<<10)))
		if _, err := buf.ReadFrom(io.LimitReader(r.Body, r.ContentLength)); err != nil {
			return nil, clientBodyError(err)
		}
		if int64(buf.Len()) != r.ContentLength {
			return nil, errClientBody
		}
		return &requestBody{replay: buf.Bytes()}, nil
	}
	return &requestBody{streamed: &countingBody{src: r.Body}}, nil
}

// forRequest returns the Body, GetBody and ContentLength of the outgoing
// request.
func (b *requestBody) forRequest(length int64) (io.ReadCloser, func() (io.ReadCloser, error), int64) {
	if b.streamed != nil {
		return b.streamed, nil, length
	}
	if len(b.replay) == 0 {
		return nil, nil, 0
	}
	get := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b.replay)), nil }
	body, _ := get()
	return body, get, int64(len(b.replay))
}

// sentAndLost reports whether bytes of a streamed body went to a member, so
// the request cannot be sent again.
func (b *requestBody) sentAndLost() bool {
	return b.streamed != nil && b.streamed.n.Load() > 0
}

// err returns the error the client's body failed with while streaming, as
// the client's problem: too large, or broken.
func (b *requestBody) err() error {
	if b.streamed == nil {
		return nil
	}
	if err := b.streamed.readErr.Load(); err != nil {
		return clientBodyError(*err)
	}
	return nil
}

func clientBodyError(err error) error {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return errBodyTooLarge
	case errors.Is(err, os.ErrDeadlineExceeded):
		return errBodyTimeout
	}
	return errClientBody
}

// countingBody passes a body through, counting what the transport read and
// remembering a read error. Close does nothing: a failed connect makes the
// transport close the body, and the next try still needs it; the server
// closes the client's body when the handler returns.
type countingBody struct {
	src     io.ReadCloser
	n       atomic.Int64
	readErr atomic.Pointer[error]
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.src.Read(p)
	c.n.Add(int64(n))
	if err != nil && err != io.EOF {
		c.readErr.CompareAndSwap(nil, &err)
	}
	return n, err
}

func (c *countingBody) Close() error { return nil }
