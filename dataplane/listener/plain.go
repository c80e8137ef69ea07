package listener

import "net"

// Plain returns a listener that wraps every connection inner accepts in a
// Guard with the given head limit (see NewGuard).
func Plain(inner net.Listener, maxHeadBytes int) net.Listener {
	return plainListener{Listener: inner, maxHead: maxHeadBytes}
}

type plainListener struct {
	net.Listener
	maxHead int
}

func (l plainListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return NewGuard(c, l.maxHead), nil
}
