package http1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
)

// recordingConn records the writes it is given, each as one call.
type recordingConn struct {
	net.Conn
	calls [][]byte
	limit int // bytes accepted in all, -1 for any
}

func (c *recordingConn) Write(p []byte) (int, error) {
	return c.take(p)
}

func (c *recordingConn) take(p []byte) (int, error) {
	if c.limit >= 0 && len(p) > c.limit {
		p = p[:c.limit]
		c.calls = append(c.calls, append([]byte(nil), p...))
		c.limit = 0
		return len(p), errors.New("connection reset")
	}
	if c.limit > 0 {
		c.limit -= len(p)
	}
	c.calls = append(c.calls, append([]byte(nil), p...))
	return len(p), nil
}

// vectorConn writes net.Buffers in one call, as listener.Guard over TCP.
type vectorConn struct{ recordingConn }

func (c *vectorConn) WriteBuffers(v *net.Buffers) (int64, error) {
	n, err := c.take(bytes.Join(*v, nil))
	return int64(n), err
}

func TestFlushWith(t *testing.T) {
	head, chunk := []byte("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n"), []byte("body part")
	want := string(head) + string(chunk)
	tests := []struct {
		name      string
		conn      interface{ sent() [][]byte }
		calls     int
		wantError bool
	}{
		{name: "writev in one call", conn: &vectorConn{recordingConn{limit: -1}}, calls: 1},
		{name: "a plain connection, write by write", conn: &recordingConn{limit: -1}, calls: 2},
		{name: "cut short", conn: &vectorConn{recordingConn{limit: len(head) + 2}}, calls: 1, wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := &connWriter{conn: tt.conn.(net.Conn)}
			bw := bufio.NewWriterSize(out, 64)
			bw.Write(head)
			err := out.flushWith(bw, chunk)
			if (err != nil) != tt.wantError {
				t.Fatalf("flushWith: %v, want an error: %v", err, tt.wantError)
			}
			calls := tt.conn.sent()
			if len(calls) != tt.calls {
				t.Errorf("%d write calls, want %d", len(calls), tt.calls)
			}
			if got := string(bytes.Join(calls, nil)); !tt.wantError && got != want {
				t.Errorf("sent %q, want %q", got, want)
			}
			if out.tail != nil {
				t.Error("the chunk is still held after the flush")
			}
			// The writer goes on as a plain one.
			if _, err := io.WriteString(out, "next"); err != nil && !tt.wantError {
				t.Errorf("a later write: %v", err)
			}
		})
	}
}

func (c *recordingConn) sent() [][]byte { return c.calls }
