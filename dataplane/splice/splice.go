// Package splice streams the bytes of two connections into each other: a
// TLS connection ramjetd does not terminate (ssl-passthrough) and the
// member's connection it goes to.
//
// Each direction runs on its own goroutine with a pooled buffer. When one
// side ends its writing (EOF), the other side's writing is shut down too
// (a TCP half-close, so that a client that sends its request and shuts
// down still gets the whole answer), and the other direction goes on. An
// error in either direction, or nothing moving either way for the idle
// timeout, closes both connections.
package splice

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// BufferSize is the size of each direction's buffer.
const BufferSize = 32 << 10

var buffers = sync.Pool{New: func() any { b := make([]byte, BufferSize); return &b }}

// Counter receives byte counts, such as a prometheus counter.
type Counter interface{ Add(float64) }

// Options are the bounds and counters of one Pipe.
type Options struct {
	// Idle closes both connections when nothing moved either way for
	// this long. Zero or less means no bound.
	Idle time.Duration
	// In counts the bytes from the client to the member, Out those from
	// the member to the client. Nil counts nothing.
	In, Out Counter
}

// Pipe streams client into member and member into client until both
// directions ended, then closes both connections. It returns the bytes
// each way.
func Pipe(client, member net.Conn, opts Options) (in, out int64) {
	p := &pipe{idle: opts.Idle}
	p.touch()
	var wg sync.WaitGroup
	wg.Go(func() { in = p.copy(member, client, opts.In) })
	out = p.copy(client, member, opts.Out)
	wg.Wait()
	client.Close()
	member.Close()
	return in, out
}

// pipe is the state both directions share.
type pipe struct {
	idle time.Duration
	// last is the Unix nanoseconds of the last bytes moved either way.
	last   atomic.Int64
	closed atomic.Bool
	once   sync.Once
}

func (p *pipe) touch() { p.last.Store(time.Now().UnixNano()) }

// copy moves src into dst until src ends; it returns the bytes moved.
func (p *pipe) copy(dst, src net.Conn, count Counter) int64 {
	bp := buffers.Get().(*[]byte)
	defer buffers.Put(bp)
	buf := *bp
	var total int64
	var deadline time.Time
	for {
		if p.idle > 0 {
			// The deadline moves only when half of it is used up, so
			// that a busy stream does not reset a timer at every read.
			if now := time.Now(); deadline.Sub(now) < p.idle/2 {
				deadline = now.Add(p.idle)
				src.SetReadDeadline(deadline)
			}
		}
		n, err := src.Read(buf)
		if n > 0 {
			p.touch()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				p.abort(dst, src)
				return total
			}
			total += int64(n)
			if count != nil {
				count.Add(float64(n))
			}
		}
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded) && p.idle > 0 && !p.closed.Load():
			if time.Since(time.Unix(0, p.last.Load())) < p.idle {
				deadline = time.Time{} // the other direction moved: wait again
				continue
			}
			p.abort(dst, src)
			return total
		case err == io.EOF:
			closeWrite(dst)
			return total
		default:
			p.abort(dst, src)
			return total
		}
	}
}

// abort ends both directions: closing both connections makes the other
// direction's read or write return.
func (p *pipe) abort(a, b net.Conn) {
	p.once.Do(func() {
		p.closed.Store(true)
		a.Close()
		b.Close()
	})
}

// closeWrite shuts down c's writing side (a FIN), or closes it when it
// cannot.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		if cw.CloseWrite() == nil {
			return
		}
	}
	c.Close()
}
