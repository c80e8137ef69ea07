package daemon

import (
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// sendWatch bounds each write of an HTTP/2 answer by the send timeout
// (nginx's send_timeout): a write that waits that long, because the client
// opens no flow-control window for the stream, ends the stream, and the
// handler's write returns, so the member's connection is released too.
// HTTP/1.x connections have the same bound from their listener.Guard;
// HTTP/2's WriteByteTimeout covers a connection the client stops reading
// altogether.
//
// A stream's own write deadline (http.ResponseController.SetWriteDeadline)
// will not do: it is a timer that resets the stream when it fires, whether
// or not a write is waiting, so it would cut an answer whose member is only
// slow to send its next part. The watch's timer instead checks, when it
// fires, whether a write has been waiting for the whole timeout. A write
// costs two atomic stores; the timer is set at most once per timeout.
type sendWatch struct {
	timeout time.Duration
	rc      *http.ResponseController
	born    time.Time    // the origin of pending's clock
	pending atomic.Int64 // when the waiting write began, in ns since born, plus one; 0: none
	armed   atomic.Bool  // the timer is set
	timer   *time.Timer
	// failedLate is set when a write failed after waiting the timeout.
	failedLate atomic.Bool

	mu    sync.Mutex // between cutting the stream and the end of the request
	ended bool
	cut   bool
}

// newSendWatch returns a watch over the writes through rc, an HTTP/2
// stream's.
func newSendWatch(rc *http.ResponseController, timeout time.Duration) *sendWatch {
	w := &sendWatch{timeout: timeout, rc: rc, born: time.Now()}
	w.timer = time.AfterFunc(time.Duration(math.MaxInt64), w.fire)
	w.timer.Stop()
	return w
}

// begin notes that a write starts.
func (w *sendWatch) begin() {
	w.pending.Store(int64(time.Since(w.born)) + 1)
	w.arm(w.timeout)
}

// done notes that the write has returned with err. A write that failed
// after waiting the whole timeout was cut by it: by this watch, or by the
// connection's WriteByteTimeout when the client stopped reading the
// connection altogether.
func (w *sendWatch) done(err error) {
	began := w.pending.Swap(0)
	if err != nil && began != 0 && time.Since(w.born)-time.Duration(began-1) >= w.timeout {
		w.failedLate.Store(true)
	}
}

// arm sets the timer to fire after d unless it is set already.
func (w *sendWatch) arm(d time.Duration) {
	if w.armed.CompareAndSwap(false, true) {
		w.timer.Reset(d)
	}
}

// fire checks the write waiting, if any: one that has waited the timeout
// ends the stream, a younger one sets the timer for the rest of its time.
// armed is cleared before pending is read, so that a write beginning
// meanwhile either sees the timer unset and sets it, or is seen here.
func (w *sendWatch) fire() {
	w.armed.Store(false)
	began := w.pending.Load()
	if began == 0 {
		return
	}
	waited := time.Since(w.born) - time.Duration(began-1)
	if waited < w.timeout {
		w.arm(w.timeout - waited)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.ended {
		w.cut = true
		// A deadline in the past resets the stream at once; the
		// waiting write returns with an error.
		w.rc.SetWriteDeadline(longAgo())
	}
}

// end stops the watch when the request is over and reports whether the
// send timeout cut the answer. The ResponseController is not used after
// end returns.
func (w *sendWatch) end() (timedOut bool) {
	w.mu.Lock()
	w.ended = true
	cut := w.cut
	w.mu.Unlock()
	w.timer.Stop()
	return cut || w.failedLate.Load()
}
