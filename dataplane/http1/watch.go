package http1

import (
	"errors"
	"os"
	"sync/atomic"
	"time"
)

// watcher notices a client that goes away while its request is served, and
// ends the request's context, so that the proxy stops
// waiting for the member. net/http starts a goroutine reading the
// connection for every request; a watcher starts reading only when the
// request has run for watchAfter, and most never do.
type watcher struct {
	sc    *serverConn
	timer *time.Timer
	state atomic.Int32
	done  chan struct{} // the read's end, once per read started
	gone  bool          // the client went away; read's, then disarm's
	b     [1]byte
}

const (
	watchOff      int32 = iota
	watchArmed          // the timer runs
	watchReading        // a read is under way
	watchStopping       // the request ended: the read is to stop
)

// arm starts the timer for a request about to be served.
func (w *watcher) arm() {
	w.state.Store(watchArmed)
	if w.timer == nil {
		w.timer = time.AfterFunc(watchAfter, w.read)
		return
	}
	w.timer.Reset(watchAfter)
}

// disarm stops the watch at the end of the request, waiting for a read
// under way to end, so that the request reader owns the connection again,
// and reports whether the client went away.
func (w *watcher) disarm() (clientGone bool) {
	w.timer.Stop()
	if w.state.CompareAndSwap(watchArmed, watchOff) {
		return false
	}
	w.state.Store(watchStopping)
	w.sc.conn.SetReadDeadline(aLongTimeAgo)
	<-w.done
	w.state.Store(watchOff)
	clientGone, w.gone = w.gone, false
	return clientGone
}

// read is the timer's function: it reads one byte, which is either the
// start of the client's next request (kept for the request reader) or the
// end of the connection.
func (w *watcher) read() {
	if !w.state.CompareAndSwap(watchArmed, watchReading) {
		return // the request ended first
	}
	defer func() { w.done <- struct{}{} }()
	c := w.sc.conn
	c.SetReadDeadline(time.Time{})
	if w.state.Load() == watchStopping {
		return // disarm's deadline may have come before ours: do not read
	}
	n, err := c.Read(w.b[:])
	if n == 1 {
		w.sc.src.pending, w.sc.src.hasPending = w.b[0], true
		return
	}
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		w.gone = true
		w.sc.current.cancel()
	}
}
