package proxy

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// scriptedReader returns its steps in order, then io.EOF.
type scriptedReader struct {
	steps  []step
	closed bool
}

type step struct {
	data string
	err  error
}

func (r *scriptedReader) Read(p []byte) (int, error) {
	if len(r.steps) == 0 {
		return 0, io.EOF
	}
	s := r.steps[0]
	r.steps = r.steps[1:]
	return copy(p, s.data), s.err
}

func (r *scriptedReader) Close() error {
	r.closed = true
	return nil
}

func TestNewRequestBody(t *testing.T) {
	big := strings.Repeat("x", ReplayBodyLimit)
	tests := []struct {
		name         string
		body         func() io.ReadCloser // nil for no body
		length       int64
		wantErr      error
		wantReplay   bool   // kept in memory
		wantStreamed bool   // passed through
		wantBody     string // what the outgoing request sends
		wantLength   int64  // outgoing ContentLength
	}{
		{name: "nil body", body: nil, length: 0, wantReplay: true, wantLength: 0},
		{name: "NoBody", body: func() io.ReadCloser { return http.NoBody }, length: 0, wantReplay: true, wantLength: 0},
		{name: "zero length", body: func() io.ReadCloser { return io.NopCloser(strings.NewReader("ignored")) }, length: 0, wantReplay: true, wantLength: 0},
		{name: "small", body: func() io.ReadCloser { return io.NopCloser(strings.NewReader("hello")) }, length: 5,
			wantReplay: true, wantBody: "hello", wantLength: 5},
		{name: "at the replay limit", body: func() io.ReadCloser { return io.NopCloser(strings.NewReader(big)) }, length: ReplayBodyLimit,
			wantReplay: true, wantBody: big, wantLength: ReplayBodyLimit},
		{name: "over the replay limit", body: func() io.ReadCloser { return io.NopCloser(strings.NewReader(big + "y")) }, length: ReplayBodyLimit + 1,
			wantStreamed: true, wantBody: big + "y", wantLength: ReplayBodyLimit + 1},
		{name: "unknown length", body: func() io.ReadCloser { return io.NopCloser(strings.NewReader("abc")) }, length: -1,
			wantStreamed: true, wantBody: "abc", wantLength: -1},
		{name: "shorter than declared", body: func() io.ReadCloser { return io.NopCloser(strings.NewReader("abc")) }, length: 10,
			wantErr: errClientBody},
		{name: "broken", body: func() io.ReadCloser {
			return &scriptedReader{steps: []step{{data: "ab"}, {err: errors.New("connection reset")}}}
		}, length: 10, wantErr: errClientBody},
		{name: "over the body limit", body: func() io.ReadCloser {
			return http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader("12345")), 3)
		}, length: 5, wantErr: errBodyTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("PUT", "/", nil)
			r.Body = nil
			if tt.body != nil {
				r.Body = tt.body()
			}
			r.ContentLength = tt.length
			b, err := newRequestBody(r)
			if err != tt.wantErr {
				t.Fatalf("newRequestBody error = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if (b.replay != nil) != tt.wantReplay || (b.streamed != nil) != tt.wantStreamed {
				t.Errorf("kept = %v, streamed = %v; want %v, %v", b.replay != nil, b.streamed != nil, tt.wantReplay, tt.wantStreamed)
			}
			body, getBody, length := b.forRequest(r.ContentLength)
			if length != tt.wantLength {
				t.Errorf("outgoing ContentLength = %d, want %d", length, tt.wantLength)
			}
			if tt.wantBody == "" {
				if body != nil || getBody != nil {
					t.Errorf("outgoing Body = %v, GetBody set = %v; want nil, nil for no body", body, getBody != nil)
				}
				return
			}
			got, err := io.ReadAll(body)
			if err != nil || string(got) != tt.wantBody {
				t.Errorf("outgoing body: %d bytes (error %v), want %d bytes", len(got), err, len(tt.wantBody))
			}
			if tt.wantStreamed {
				if getBody != nil {
					t.Errorf("a streamed body has GetBody, want nil: it cannot be sent again")
				}
				if !b.sentAndLost() {
					t.Errorf("sentAndLost() = false after the body was read, want true")
				}
				return
			}
			if getBody == nil {
				t.Fatalf("a kept body has no GetBody")
			}
			for i := range 2 {
				again, err := getBody()
				if err != nil {
					t.Fatalf("GetBody: %v", err)
				}
				got, _ := io.ReadAll(again)
				if string(got) != tt.wantBody {
					t.Errorf("GetBody call %d gave %d bytes, want the same %d bytes", i+1, len(got), len(tt.wantBody))
				}
			}
			if b.sentAndLost() || b.err() != nil {
				t.Errorf("kept body: sentAndLost = %v, err = %v; want false, nil", b.sentAndLost(), b.err())
			}
		})
	}
}

func TestStreamedBodyState(t *testing.T) {
	tests := []struct {
		name     string
		src      io.ReadCloser
		wantLost bool
		wantErr  error
	}{
		{name: "complete", src: io.NopCloser(strings.NewReader("abc")), wantLost: true},
		{name: "empty", src: io.NopCloser(strings.NewReader("")), wantLost: false},
		{name: "over the body limit", src: http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader("123456")), 3),
			wantLost: true, wantErr: errBodyTooLarge},
		{name: "broken after bytes", src: &scriptedReader{steps: []step{{data: "ab"}, {err: errors.New("reset")}}},
			wantLost: true, wantErr: errClientBody},
		{name: "broken before bytes", src: &scriptedReader{steps: []step{{err: io.ErrUnexpectedEOF}}},
			wantLost: false, wantErr: errClientBody},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", nil)
			r.Body, r.ContentLength = tt.src, -1
			b, err := newRequestBody(r)
			if err != nil {
				t.Fatal(err)
			}
			if b.sentAndLost() || b.err() != nil {
				t.Errorf("before reading: sentAndLost = %v, err = %v; want false, nil", b.sentAndLost(), b.err())
			}
			body, _, _ := b.forRequest(-1)
			io.ReadAll(body)
			if got := b.sentAndLost(); got != tt.wantLost {
				t.Errorf("sentAndLost() = %v, want %v", got, tt.wantLost)
			}
			if got := b.err(); got != tt.wantErr {
				t.Errorf("err() = %v, want %v", got, tt.wantErr)
			}
		})
	}
}

func TestCountingBody(t *testing.T) {
	// Both errors have the same concrete type; the first one maps to 413,
	// the second to 400, which tells which one the body remembered.
	tooLarge := &net.OpError{Op: "read", Net: "tcp", Err: &http.MaxBytesError{Limit: 5}}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}
	src := &scriptedReader{steps: []step{{data: "abc"}, {data: "de", err: tooLarge}, {data: "f", err: reset}, {err: io.EOF}}}
	c := &countingBody{src: src}
	b := &requestBody{streamed: c}
	buf := make([]byte, 8)
	var total int
	for range 4 {
		n, _ := c.Read(buf)
		total += n
	}
	if got := c.n.Load(); got != 6 || total != 6 {
		t.Errorf("counted %d bytes (Read returned %d), want 6", got, total)
	}
	if got := b.err(); got != errBodyTooLarge {
		t.Errorf("err() = %v, want %v: the first read error is the one remembered", got, errBodyTooLarge)
	}
	if err := c.Close(); err != nil || src.closed {
		t.Errorf("Close() = %v and closed the source = %v, want nil and false", err, src.closed)
	}
	// The body can still be read after Close: the next try needs it.
	src.steps = []step{{data: "gh"}}
	if n, _ := c.Read(buf); n != 2 {
		t.Errorf("Read after Close returned %d bytes, want 2", n)
	}
}

func TestCountingBodyEOFIsNotAnError(t *testing.T) {
	c := &countingBody{src: io.NopCloser(strings.NewReader("abc"))}
	if _, err := io.ReadAll(c); err != nil {
		t.Fatal(err)
	}
	c.Read(make([]byte, 1)) // EOF again
	if err := (&requestBody{streamed: c}).err(); err != nil {
		t.Errorf("err() = %v after reading to EOF, want nil", err)
	}
}

// TestCountingBodyErrorsOfTwoTypes reads a body that fails twice with
// errors of different concrete types (*http.MaxBytesError, then
// *net.OpError). The first must be remembered and the second must not
// crash the proxy.
func TestCountingBodyErrorsOfTwoTypes(t *testing.T) {
	src := &scriptedReader{steps: []step{
		{err: &http.MaxBytesError{Limit: 5}},
		{err: &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}},
	}}
	c := &countingBody{src: src}
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("the second failed Read panicked: %v; want the first error kept and the second ignored", p)
		}
	}()
	c.Read(make([]byte, 8))
	c.Read(make([]byte, 8))
	if got := (&requestBody{streamed: c}).err(); got != errBodyTooLarge {
		t.Errorf("err() = %v, want %v (the first error's)", got, errBodyTooLarge)
	}
}
