package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// serverName is the name the ClientHello asks for: the passthrough host.
const serverName = "pass.bench"

// The command byte a client sends after its ClientHello tells the member
// what to do with the connection.
const (
	cmdDownload = 'D' // the member writes until the client goes
	cmdUpload   = 'U' // the member reads until the client goes
	cmdConnect  = 'C' // the member answers one byte and closes
)

// chunkSize is the size of the writes of the clients and the member.
const chunkSize = 64 << 10

// clientHello returns the first flight of a Go TLS client asking for name:
// a real ClientHello, which the proxies read to choose the member.
func clientHello(name string) ([]byte, error) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() { _ = tls.Client(a, &tls.Config{ServerName: name}).Handshake() }()
	if err := b.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return nil, err
	}
	buf := make([]byte, 64<<10)
	n, err := b.Read(buf)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// member is the backend the proxies splice to: it reads the ClientHello
// (it knows its length), then the command byte, and acts on it. Upload
// bytes it reads are counted in received.
type member struct {
	ln       net.Listener
	hello    int
	received atomic.Int64
	wg       sync.WaitGroup
}

func startMember(helloLen int) (*member, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &member{ln: ln, hello: helloLen}
	m.wg.Go(m.accept)
	return m, nil
}

func (m *member) addr() string { return m.ln.Addr().String() }

func (m *member) accept() {
	for {
		c, err := m.ln.Accept()
		if err != nil {
			return
		}
		m.wg.Go(func() { m.serve(c) })
	}
}

func (m *member) serve(c net.Conn) {
	defer c.Close()
	head := make([]byte, m.hello+1)
	if _, err := io.ReadFull(c, head); err != nil {
		return
	}
	switch head[m.hello] {
	case cmdDownload:
		chunk := make([]byte, chunkSize)
		for {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	case cmdUpload:
		buf := make([]byte, chunkSize)
		for {
			n, err := c.Read(buf)
			m.received.Add(int64(n))
			if err != nil {
				return
			}
		}
	case cmdConnect:
		_, _ = c.Write([]byte{1})
	}
}

func (m *member) close() {
	m.ln.Close()
	m.wg.Wait()
}

// load runs conns clients against the proxy at addr until stop, each
// starting every connection with hello and the cell's command; done counts
// bytes (download: read by the clients) or connections (connect), errs the
// failures before stop.
type load struct {
	addr  string
	hello []byte
	cmd   byte
	stop  time.Time
	done  atomic.Int64
	errs  atomic.Int64
	first atomic.Pointer[string]
	wg    sync.WaitGroup
}

func startLoad(addr string, hello []byte, cmd byte, conns int, stop time.Time) *load {
	l := &load{addr: addr, hello: append(append([]byte{}, hello...), cmd), cmd: cmd, stop: stop}
	for range conns {
		l.wg.Go(l.client)
	}
	return l
}

func (l *load) wait() { l.wg.Wait() }

func (l *load) fail(err error) {
	if time.Now().After(l.stop) {
		return
	}
	l.errs.Add(1)
	msg := err.Error()
	l.first.CompareAndSwap(nil, &msg)
}

func (l *load) client() {
	if l.cmd == cmdConnect {
		for time.Now().Before(l.stop) {
			if err := l.connect(); err != nil {
				l.fail(err)
			} else {
				l.done.Add(1)
			}
		}
		return
	}
	for time.Now().Before(l.stop) {
		if err := l.stream(); err != nil {
			l.fail(err)
		}
	}
}

// dial opens a connection through the proxy and sends the ClientHello and
// the command.
func (l *load) dial() (net.Conn, error) {
	c, err := net.DialTimeout("tcp", l.addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	if err := c.SetDeadline(l.stop); err != nil {
		c.Close()
		return nil, err
	}
	if _, err := c.Write(l.hello); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// connect makes one short connection: the member's byte, then close.
func (l *load) connect() error {
	c, err := l.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	var b [1]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return fmt.Errorf("reading the member's byte: %w", err)
	}
	return nil
}

// stream keeps one connection busy until stop.
func (l *load) stream() error {
	c, err := l.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	buf := make([]byte, chunkSize)
	for {
		var n int
		if l.cmd == cmdDownload {
			n, err = c.Read(buf)
			l.done.Add(int64(n))
		} else {
			_, err = c.Write(buf)
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil
			}
			return err
		}
	}
}
