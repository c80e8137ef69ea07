package http1

import (
	"crypto/tls"
	"net"
	"syscall"
)

// idleCheck looks at an idle connection's socket without reading from it
// or waiting: a kept-alive connection may be used again only when nothing
// is waiting on it. Bytes waiting there are the member's unsolicited
// output (a late 408, bytes past a response's end) that the next request
// would read as its answer; an end of stream is a close. net/http's
// Transport notices both because it always has a read pending.
type idleCheck struct {
	raw  syscall.RawConn // nil when the connection has no socket (tests)
	ok   bool
	b    [1]byte
	peek func(fd uintptr) bool
}

func newIdleCheck(c net.Conn) *idleCheck {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	k := new(idleCheck)
	if sc, ok := c.(syscall.Conn); ok {
		k.raw, _ = sc.SyscallConn()
	}
	k.peek = func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), k.b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		k.ok = err == syscall.EAGAIN
		return true
	}
	return k
}

// usable reports whether nothing waits on the socket and it is open.
func (k *idleCheck) usable() bool {
	if k.raw == nil {
		return true
	}
	k.ok = false
	if err := k.raw.Read(k.peek); err != nil {
		return false
	}
	return k.ok
}
