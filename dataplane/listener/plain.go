package listener

import "net"

// Plain returns a listener that wraps every connection inner accepts in a
// Guard with the given limits (see NewGuard).
func Plain(inner net.Listener, lim Limits) net.Listener {
	return plainListener{Listener: inner, lim: lim}
}

type plainListener struct {
	net.Listener
	lim Limits
}

func (l plainListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return NewGuard(c, l.lim), nil
}
