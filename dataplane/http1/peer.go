package http1

import (
	"crypto/tls"
	"net"
	"syscall"
)

// peerClosed reports whether the member closed (or reset) an idle
// connection, without reading from it: a peek at the socket that does not
// wait. Data waiting on an idle connection is not a close (for TLS it is
// usually a session ticket, read with the next response).
func peerClosed(c net.Conn) bool {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	closed := false
	err = raw.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = n == 0 && err == nil || err != nil && err != syscall.EAGAIN && err != syscall.EINTR
		return true
	})
	return closed || err != nil
}
