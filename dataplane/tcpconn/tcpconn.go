// Package tcpconn gives a TCP connection a write that waits for the answer
// in the same call to Go's poller, so that reading the answer takes one
// read system call instead of two.
//
// Go's net package reads before it waits: a Read makes a read system call,
// and only when that finds nothing (EAGAIN) does the goroutine wait for the
// poller, and then read again. A proxy reads a member's answer right after
// sending the request, so that first read nearly always finds nothing.
// Waiting first is not safe with a plain Read: each read starts by
// forgetting any readiness the poller noted before it (Go can, since it
// reads first), and data that arrived before the Read began would never be
// reported again.
//
// WriteThenWait avoids both. It writes the request and waits within one
// syscall.RawConn.Read, which forgets old readiness before the write: any
// byte of the answer arrives after that, and its readiness is kept. The
// next Read then finds the answer with one read. nginx gets the same from
// epoll: it reads a member only once epoll reported data.
//
// The wait is safe only where what is awaited cannot arrive before the
// write: an answer to it. Bytes already in the socket when the call begins
// are not reported; they are read with the answer, once it comes. So it
// does not suit a server writing an answer and then waiting for the next
// request, which a pipelining client may have sent already, nor the last
// piece of a request whose first pieces the member may have answered.
package tcpconn

import (
	"net"
	"os"
	"syscall"
)

// Conn is a TCP connection with WriteThenWait. Its other methods are the
// TCPConn's, so that net.Buffers writes with one writev and crypto/tls and
// net/http see a TCP connection.
type Conn struct {
	*net.TCPConn
	raw syscall.RawConn

	// The state of one WriteThenWait, for writeThenWait, which the
	// poller calls; a connection's writes are serialised by its user.
	out     []byte
	written int
	errno   error
	call    func(fd uintptr) bool
}

// Wrap returns c as a Conn when it is a *net.TCPConn, and c itself
// otherwise.
func Wrap(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	w := &Conn{TCPConn: tc, raw: raw}
	w.call = w.writeThenWait
	return w
}

// WriteThenWait writes p, all of it or an error as Write does, and then
// waits until the connection has something to read, its read deadline
// passes or it is closed; the next Read reports the last two. It is for
// the last write before an answer is read: a wait after an earlier write
// would wait for an answer that cannot come yet.
//
// The write is made from the poller's read loop, outside net's write lock:
// no other goroutine may read or write c during the call.
func (c *Conn) WriteThenWait(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.out, c.written, c.errno = p, 0, nil
	// An error of the wait itself (a deadline, a close) is the next
	// Read's to report, as it would have been without the wait.
	c.raw.Read(c.call)
	written, errno := c.written, c.errno
	c.out = nil
	switch {
	case errno != nil:
		return written, &net.OpError{Op: "write", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("write", errno)}
	case written < len(p):
		// The socket's buffer was full, or a deadline or Close came
		// before the write: Write finishes, or says why it cannot.
		n, err := c.TCPConn.Write(p[written:])
		return written + n, err
	}
	return written, nil
}

// writeThenWait is WriteThenWait's function for the poller's loop, which
// calls it again after each wait for readability: the first call writes
// and asks to wait; the next one ends the loop.
func (c *Conn) writeThenWait(fd uintptr) bool {
	if c.out == nil {
		return true // woken: something to read
	}
	for c.written < len(c.out) {
		n, err := syscall.Write(int(fd), c.out[c.written:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return true // the rest goes through Write, which waits for room
		case err != nil:
			c.errno = err
			return true
		}
		c.written += n
	}
	c.out = nil
	return false
}
