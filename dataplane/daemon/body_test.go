package daemon

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// deadlineWriter is a ResponseWriter that counts the read deadlines set
// through it after the handler has returned (done).
type deadlineWriter struct {
	http.ResponseWriter
	done atomic.Bool
	late atomic.Int32
}

func (w *deadlineWriter) SetReadDeadline(time.Time) error {
	if w.done.Load() {
		w.late.Add(1)
	}
	return nil
}

// TestBodyReadAfterHandler checks that a request body read after its
// handler has returned, as a transport still streaming it to a member
// that answered first does from its own goroutine, fails without using
// the ResponseController. Over HTTP/2 net/http frees the stream's writer
// when the handler returns: a read deadline set then was a nil dereference
// in the transport's goroutine, which ended ramjetd.
func TestBodyReadAfterHandler(t *testing.T) {
	for _, proto := range []int{1, 2} {
		t.Run(fmt.Sprintf("HTTP/%d", proto), func(t *testing.T) {
			w := &deadlineWriter{ResponseWriter: httptest.NewRecorder()}
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("a body"))
			r.ProtoMajor = proto
			var rec recorder
			rec.start(w, r, time.Minute, 0)
			if _, err := io.ReadFull(r.Body, make([]byte, 2)); err != nil {
				t.Fatalf("a read while the handler runs: %v", err)
			}
			rec.settle() // the handler returns
			w.done.Store(true)
			if n, err := r.Body.Read(make([]byte, 8)); n != 0 || !errors.Is(err, errBodyStopped) {
				t.Errorf("a read after the handler returned: got %d bytes, %v; want errBodyStopped", n, err)
			}
			r.Body.Close()
			if n := w.late.Load(); n != 0 {
				t.Errorf("%d read deadlines were set after the handler returned, want none", n)
			}
		})
	}
}

// TestEarlyMemberAnswerHTTP2 is the end-to-end case of
// TestBodyReadAfterHandler: HTTP/2 uploads to a member that answers at
// once (Connection: close) and goes on reading, so that the transport is
// still streaming the body when the handler returns. Before the fix a run
// ended the test binary in about one run of three; every request must get
// the member's answer and the daemon must go on serving.
func TestEarlyMemberAnswerHTTP2(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				if _, err := http.ReadRequest(br); err != nil {
					return
				}
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nearly")
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				io.Copy(io.Discard, br)
			}()
		}
	}()
	td := startDaemon(t, sendConfig, map[string]any{"Member": ln.Addr().String()})
	c := h2Client(t)
	for i := range 30 {
		body, upload := io.Pipe()
		go func() {
			chunk := bytes.Repeat([]byte("x"), 16<<10)
			for range 256 {
				if _, err := upload.Write(chunk); err != nil {
					return
				}
				time.Sleep(time.Millisecond)
			}
			upload.Close()
		}()
		req, err := http.NewRequest(http.MethodPost, td.url("https")+"/upload", body)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "app.test"
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(got) != "early" {
			t.Fatalf("request %d: got %d %q, want the member's 200 \"early\"", i, resp.StatusCode, got)
		}
		// The upload goes on a little after the answer, then stops.
		time.Sleep(50 * time.Millisecond)
		body.Close()
	}
}
