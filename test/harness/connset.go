package harness

import (
	"net"
	"sync"
)

// ConnSet holds the open connections of a forwarder (a load balancer, a
// proxy), so that closing the forwarder closes them. It is safe for
// concurrent use; the zero value is ready.
type ConnSet struct {
	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
}

// Track records conns; false once CloseAll ran (the caller closes them).
func (s *ConnSet) Track(conns ...net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.conns == nil {
		s.conns = map[net.Conn]bool{}
	}
	for _, c := range conns {
		s.conns[c] = true
	}
	return true
}

// Untrack forgets conns, which their forwarding closed.
func (s *ConnSet) Untrack(conns ...net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range conns {
		delete(s.conns, c)
	}
}

// CloseAll closes every tracked connection; later Track calls fail.
func (s *ConnSet) CloseAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.Close()
	}
	s.conns, s.closed = nil, true
}
