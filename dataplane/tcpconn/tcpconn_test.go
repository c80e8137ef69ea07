package tcpconn

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pair returns a wrapped client connection and the server's end of it,
// over loopback TCP.
func pair(t *testing.T) (*Conn, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer := <-accepted
	if peer == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { c.Close(); peer.Close() })
	w, ok := Wrap(c).(*Conn)
	if !ok {
		t.Fatalf("Wrap(%T) is not a *Conn", c)
	}
	return w, peer.(*net.TCPConn)
}

// answerLater has peer read want once it is there (one read system call),
// then write answer after a while (while the caller waits), and reports
// what went wrong on the way.
func answerLater(peer net.Conn, want, answer string) <-chan error {
	done := make(chan error, 1)
	go func() {
		time.Sleep(10 * time.Millisecond)
		buf := make([]byte, len(want))
		if _, err := io.ReadFull(peer, buf); err != nil || string(buf) != want {
			done <- fmt.Errorf("peer read %q, %v; want %q", buf, err, want)
			return
		}
		time.Sleep(20 * time.Millisecond)
		_, err := peer.Write([]byte(answer))
		done <- err
	}()
	return done
}

// ask sends "request" with WriteThenWait while peer answers later, and
// returns how long the call took.
func ask(t *testing.T, c *Conn, peer net.Conn, answer string) time.Duration {
	t.Helper()
	done := answerLater(peer, "request", answer)
	start := time.Now()
	if n, err := c.WriteThenWait([]byte("request")); n != 7 || err != nil {
		t.Fatalf("WriteThenWait = %d, %v", n, err)
	}
	waited := time.Since(start)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return waited
}

// readAll reads from c until it holds n bytes.
func readAll(t *testing.T, c net.Conn, n int) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, n)
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatalf("read: %q, %v", buf, err)
	}
	return string(buf)
}

func TestWrap(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if got := Wrap(a); got != a {
		t.Errorf("Wrap of a pipe = %T, want the pipe itself", got)
	}
	_, tc := pair(t)
	if w, ok := Wrap(tc).(*Conn); !ok || w.TCPConn != tc {
		t.Errorf("Wrap of a TCP connection = %T, want a *Conn over it", Wrap(tc))
	}
}

func TestWriteThenWait(t *testing.T) {
	t.Run("the answer arrives later", func(t *testing.T) {
		c, peer := pair(t)
		if waited := ask(t, c, peer, "answer"); waited < 15*time.Millisecond {
			t.Errorf("WriteThenWait returned after %v, before the answer", waited)
		}
		if got := readAll(t, c, 6); got != "answer" {
			t.Errorf("read %q, want \"answer\"", got)
		}
	})
	t.Run("bytes there before the call", func(t *testing.T) {
		c, peer := pair(t)
		peer.Write([]byte("early "))
		time.Sleep(20 * time.Millisecond)
		ask(t, c, peer, "answer")
		if got := readAll(t, c, 12); got != "early answer" {
			t.Errorf("read %q, want \"early answer\"", got)
		}
	})
	t.Run("the end of the stream", func(t *testing.T) {
		c, peer := pair(t)
		go func() {
			io.ReadFull(peer, make([]byte, 7))
			time.Sleep(20 * time.Millisecond)
			peer.CloseWrite()
		}()
		if _, err := c.WriteThenWait([]byte("request")); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := c.Read(make([]byte, 8)); n != 0 || err != io.EOF {
			t.Fatalf("read %d, %v; want 0, io.EOF", n, err)
		}
	})
	t.Run("a read deadline while waiting", func(t *testing.T) {
		c, peer := pair(t)
		c.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
		if _, err := c.WriteThenWait([]byte("request")); err != nil {
			t.Fatalf("WriteThenWait = %v; the wait's deadline is the next Read's to report", err)
		}
		if got := readAll(t, peer, 7); got != "request" {
			t.Errorf("peer read %q", got)
		}
		_, err := c.Read(make([]byte, 8))
		var op *net.OpError
		if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &op) || op.Op != "read" {
			t.Errorf("the Read after the wait = %v; want a read timeout", err)
		}
	})
	t.Run("a write deadline passed before the call", func(t *testing.T) {
		c, peer := pair(t)
		c.SetDeadline(time.Unix(1, 0))
		_, err := c.WriteThenWait([]byte("request"))
		var op *net.OpError
		if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &op) || op.Op != "write" {
			t.Fatalf("WriteThenWait = %v; want a write timeout", err)
		}
		peer.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		if n, _ := peer.Read(make([]byte, 8)); n != 0 {
			t.Errorf("the peer received %d bytes of a write that failed", n)
		}
	})
	t.Run("a peer that reset the connection", func(t *testing.T) {
		c, peer := pair(t)
		peer.SetLinger(0)
		peer.Close()
		time.Sleep(20 * time.Millisecond)
		_, err := c.WriteThenWait([]byte("request"))
		var op *net.OpError
		if !(errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)) || !errors.As(err, &op) || op.Op != "write" {
			t.Fatalf("WriteThenWait = %v; want a write OpError wrapping ECONNRESET or EPIPE", err)
		}
	})
	t.Run("more than the socket takes at once", func(t *testing.T) {
		c, peer := pair(t)
		big := bytes.Repeat([]byte("0123456789abcdef"), 1<<19) // 8 MiB
		got := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(io.LimitReader(peer, int64(len(big))))
			got <- b
			peer.Write([]byte("ok"))
		}()
		if n, err := c.WriteThenWait(big); n != len(big) || err != nil {
			t.Fatalf("WriteThenWait = %d, %v", n, err)
		}
		if b := <-got; !bytes.Equal(b, big) {
			t.Errorf("the peer received %d bytes, not the %d written in order", len(b), len(big))
		}
		if answer := readAll(t, c, 2); answer != "ok" {
			t.Errorf("read %q, want \"ok\"", answer)
		}
	})
}

// TestOneReadAfterWait checks the point of the package: the answer after
// WriteThenWait takes one read system call, where after Write it takes two
// (the first finding nothing). The peer's read of the request is counted
// too: it is in this process.
func TestOneReadAfterWait(t *testing.T) {
	c, peer := pair(t)
	cases := []struct {
		name  string
		write func([]byte) (int, error)
		want  int64
	}{
		{"WriteThenWait", c.WriteThenWait, 1 + 1},
		{"Write", c.Write, 1 + 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reads, _ := fewestCalls(t, func() {
				done := answerLater(peer, "request", "answer")
				if _, err := tc.write([]byte("request")); err != nil {
					t.Fatal(err)
				}
				if got := readAll(t, c, 6); got != "answer" {
					t.Fatalf("read %q", got)
				}
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			})
			if reads != tc.want {
				t.Errorf("read system calls for the answer = %d, want %d", reads, tc.want)
			}
		})
	}
}

// TestBuffersWritev checks that a Conn still writes net.Buffers with one
// writev: net looks for an unexported method that only its own
// connections have, and embedding keeps it.
func TestBuffersWritev(t *testing.T) {
	c, peer := pair(t)
	go io.Copy(io.Discard, peer)
	_, writes := fewestCalls(t, func() {
		bufs := net.Buffers{[]byte("head "), []byte("body "), []byte("tail")}
		if _, err := bufs.WriteTo(c); err != nil {
			t.Fatal(err)
		}
	})
	if writes != 1 {
		t.Errorf("write system calls for three buffers = %d, want 1 (writev)", writes)
	}
}

// fewestCalls runs f three times and returns the fewest read and write
// system calls the process made during a run, from /proc/self/io. The
// runtime's own calls (waking a poller on another thread) may fall in a
// run: one processor makes them rarer, and the fewest are f's.
func fewestCalls(t *testing.T, f func()) (reads, writes int64) {
	t.Helper()
	if _, _, err := ioCalls(); err != nil {
		t.Skipf("no /proc/self/io here: %v", err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	reads, writes = 1<<62, 1<<62
	for range 3 {
		r0, w0, _ := ioCalls()
		f()
		r1, w1, _ := ioCalls()
		// The first ioCalls's own read is counted by the second.
		reads, writes = min(reads, r1-r0-1), min(writes, w1-w0)
	}
	return reads, writes
}

// ioCalls returns syscr and syscw from /proc/self/io, read with one read
// system call.
func ioCalls() (reads, writes int64, err error) {
	fd, err := syscall.Open("/proc/self/io", syscall.O_RDONLY, 0)
	if err != nil {
		return 0, 0, err
	}
	defer syscall.Close(fd)
	var buf [1024]byte
	n, err := syscall.Read(fd, buf[:])
	if err != nil {
		return 0, 0, err
	}
	for line := range strings.Lines(string(buf[:n])) {
		name, v, _ := strings.Cut(strings.TrimSpace(line), ": ")
		switch name {
		case "syscr":
			reads, err = strconv.ParseInt(v, 10, 64)
		case "syscw":
			writes, err = strconv.ParseInt(v, 10, 64)
		}
		if err != nil {
			return 0, 0, err
		}
	}
	return reads, writes, nil
}
