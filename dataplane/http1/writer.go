package http1

import (
	"bufio"
	"io"
	"net"
)

// connWriter is what a connection's write buffer flushes into: the
// connection, and, for flushWith, the buffered bytes and the next chunk
// together in one writev.
type connWriter struct {
	conn net.Conn
	tail []byte // sent after the bytes being flushed, in the same call
}

// buffersWriter is a connection that writes net.Buffers with one writev
// (listener.Guard, over TCP).
type buffersWriter interface {
	WriteBuffers(v *net.Buffers) (int64, error)
}

func (c *connWriter) Write(p []byte) (int, error) {
	if c.tail == nil {
		return c.conn.Write(p)
	}
	bufs := net.Buffers{p, c.tail}
	tail := len(c.tail)
	c.tail = nil
	var n int64
	var err error
	if bw, ok := c.conn.(buffersWriter); ok {
		n, err = bw.WriteBuffers(&bufs)
	} else {
		n, err = bufs.WriteTo(c.conn)
	}
	if err == nil && n < int64(len(p)+tail) {
		err = io.ErrShortWrite
	}
	return min(int(n), len(p)), err
}

// flushWith sends what bw holds and then p, in one system call where the
// connection allows it. bw must hold something: an empty buffer flushes
// nothing, and p would not be sent.
func (c *connWriter) flushWith(bw *bufio.Writer, p []byte) error {
	c.tail = p
	err := bw.Flush()
	c.tail = nil
	return err
}
