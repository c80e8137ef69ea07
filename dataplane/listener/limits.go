package listener

import (
	"crypto/tls"
	"errors"
	"net"
	"os"
	"sync/atomic"
	"time"
)

// Limits are what a Guard bounds on its connection besides following the
// framing. The zero value bounds only the head (net/http's default limit).
type Limits struct {
	// MaxHeadBytes is the longest request head the guard follows (net/http
	// allows its Server.MaxHeaderBytes plus 4096); zero or less means
	// net/http's default. A longer head is not followed: Verdict refuses
	// that request and every later one.
	MaxHeadBytes int
	// SendTimeout bounds every write to the client, as nginx's
	// send_timeout bounds the time between two successful writes: a write
	// that cannot finish in time fails with a timeout, and the connection
	// is of no further use. Zero or less means no bound.
	SendTimeout time.Duration
	// Linger bounds the lingering close of a connection marked with
	// LingerOnClose. Its zero value closes at once.
	Linger Linger
	// Observer, if not nil, is told of send timeouts and lingering closes.
	Observer Observer
}

// Linger bounds a lingering close (nginx's lingering_time and
// lingering_timeout).
type Linger struct {
	// Time is the longest the close waits for the client in all.
	Time time.Duration
	// Timeout ends the wait when nothing arrives for this long.
	Timeout time.Duration
}

// LingerEnd says how a lingering close ended.
type LingerEnd int

// How lingering closes end.
const (
	// LingerClientClosed: the client closed its side (or reset the
	// connection) first.
	LingerClientClosed LingerEnd = iota
	// LingerQuiet: nothing arrived for Linger.Timeout.
	LingerQuiet
	// LingerTimeUp: the client was still sending when Linger.Time ran out.
	LingerTimeUp
)

// String names the end as the metrics label it.
func (e LingerEnd) String() string {
	switch e {
	case LingerClientClosed:
		return "client_closed"
	case LingerQuiet:
		return "quiet"
	}
	return "time_up"
}

// Observer is told what a Guard's limits did to its connection. Its methods
// are called from the connection's goroutines and must not block.
type Observer interface {
	// SendTimedOut is called once for a connection whose write to the
	// client did not finish within Limits.SendTimeout.
	SendTimedOut()
	// Lingered is called when a lingering close has ended.
	Lingered(end LingerEnd)
}

// sendDeadline keeps the write deadline of a connection ahead of its
// writes, as nginx's send_timeout: arm it before each write, and a write the
// client takes nothing of for the timeout fails.
//
// Setting a deadline takes a lock in the runtime's poller, so arm renews it
// only once a sixteenth of the timeout has passed since it was last set: a
// write has between 15/16 of the timeout and all of it. A deadline left in
// the past between writes does no harm: the next write renews it first.
type sendDeadline struct {
	timeout time.Duration
	set     func(time.Time) error
	born    time.Time    // the origin of armed's clock
	armed   atomic.Int64 // when the deadline was last set, since born; -1: to be set
}

// sendRenewDivisor: the deadline is renewed once timeout/sendRenewDivisor
// has passed since it was last set.
const sendRenewDivisor = 16

// start makes s set deadlines timeout ahead with set (the connection's
// SetWriteDeadline); a timeout of zero or less bounds nothing.
func (s *sendDeadline) start(timeout time.Duration, set func(time.Time) error) {
	s.timeout, s.set, s.born = timeout, set, time.Now()
	s.armed.Store(-1)
}

// arm sets the deadline for a write about to start, unless the one set
// last is younger than a sixteenth of the timeout.
func (s *sendDeadline) arm() {
	if s.timeout <= 0 {
		return
	}
	now := time.Since(s.born)
	if last := s.armed.Load(); last >= 0 && now-time.Duration(last) < s.timeout/sendRenewDivisor {
		return
	}
	s.armed.Store(int64(now))
	s.set(s.born.Add(now + s.timeout))
}

// reset makes the next arm set the deadline, because someone else set or
// cleared it meanwhile.
func (s *sendDeadline) reset() { s.armed.Store(-1) }

// sent notes the error of a write: a timeout is the send timeout's, which
// the observer hears of once per connection.
func (g *Guard) sent(err error) {
	if err != nil && g.lim.SendTimeout > 0 && errors.Is(err, os.ErrDeadlineExceeded) &&
		g.sendTimedOut.CompareAndSwap(false, true) && g.lim.Observer != nil {
		g.lim.Observer.SendTimedOut()
	}
}

// LingerOnClose makes the next Close of the connection a lingering close:
// the handler answered without reading the whole request body, so the
// client may still be sending it. Closing at once would make the kernel
// answer those bytes with a reset, which can destroy the answer before the
// client has read it; nginx lingers for the same reason.
func (g *Guard) LingerOnClose() {
	g.linger.Store(true)
}

// lingeringClose shuts down the writing side (the client sees the answer
// end), then reads and drops what arrives until the client closes, nothing
// arrives for Linger.Timeout, or Linger.Time has passed, and then closes.
// The bytes read are not followed: nothing more is served on the
// connection.
func (g *Guard) lingeringClose() error {
	raw := g.conn
	if tc, ok := raw.(*tls.Conn); ok {
		tc.CloseWrite() // close_notify, within crypto/tls's own 5s bound
		raw = tc.NetConn()
	}
	if cw, ok := raw.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	end := g.drain(raw)
	if g.lim.Observer != nil {
		g.lim.Observer.Lingered(end)
	}
	return g.conn.Close()
}

// drain reads and drops what raw receives within the bounds of Linger.
func (g *Guard) drain(raw net.Conn) LingerEnd {
	buf := make([]byte, 4<<10)
	giveUp := time.Now().Add(g.lim.Linger.Time)
	for {
		deadline, quiet := time.Now().Add(g.lim.Linger.Timeout), true
		if giveUp.Before(deadline) {
			deadline, quiet = giveUp, false
		}
		raw.SetReadDeadline(deadline)
		if _, err := raw.Read(buf); err != nil {
			switch {
			case !errors.Is(err, os.ErrDeadlineExceeded):
				return LingerClientClosed
			case quiet:
				return LingerQuiet
			}
			return LingerTimeUp
		}
	}
}
