package daemon

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// readGRPCMessage reads one framed gRPC message from r.
func readGRPCMessage(r io.Reader) ([]byte, error) {
	var prefix [5]byte
	if _, err := io.ReadFull(r, prefix[:]); err != nil {
		return nil, err
	}
	msg := make([]byte, binary.BigEndian.Uint32(prefix[1:]))
	_, err := io.ReadFull(r, msg)
	return msg, err
}

// grpcStreamEchoHandler is a bidirectional streaming gRPC method: it sends
// its headers at once, answers each message as it arrives, and ends with
// trailers when the client ends its stream.
func grpcStreamEchoHandler(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/grpc")
	h.Set("Trailer", "Grpc-Status")
	w.WriteHeader(http.StatusOK)
	flusher := w.(http.Flusher)
	flusher.Flush()
	n := 0
	for {
		msg, err := readGRPCMessage(r.Body)
		if err != nil {
			break
		}
		n++
		w.Write(grpcMessage(fmt.Appendf(nil, "echo %d: %s", n, msg)))
		flusher.Flush()
	}
	h.Set("Grpc-Status", "0")
}

// TestGRPCBidiStreamingOverH2C proves that a bidirectional gRPC stream
// passes through ramjetd to an h2c member both ways at once: each message
// the client sends is answered before it sends the next, and the trailers
// come at the end.
func TestGRPCBidiStreamingOverH2C(t *testing.T) {
	h2c := startStreamServer(t, &http.Server{
		Handler:   http.HandlerFunc(grpcStreamEchoHandler),
		Protocols: streamProtocols(false, false, true),
	}, nil)
	plain := startBackend(t, grpcEchoHandler)
	td := startDaemon(t, streamGRPCConfig, map[string]any{"H2C": h2c.addr, "Plain": plain.addr})

	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, td.url("https")+grpcPath, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "grpc.test"
	req.ContentLength = -1
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	type answer struct {
		resp *http.Response
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := h2Client(t).Do(req)
		answered <- answer{resp, err}
	}()
	// The member sends its headers before it reads anything, so the
	// answer starts while the request stream is still open.
	a := <-answered
	if a.err != nil {
		t.Fatal(a.err)
	}
	defer a.resp.Body.Close()
	if a.resp.ProtoMajor != 2 || a.resp.StatusCode != http.StatusOK {
		t.Fatalf("got %s %d, want HTTP/2 200", a.resp.Proto, a.resp.StatusCode)
	}
	body := bufio.NewReader(a.resp.Body)
	for i, msg := range []string{"one", "two", "three"} {
		if _, err := pw.Write(grpcMessage([]byte(msg))); err != nil {
			t.Fatalf("sending message %d: %v", i+1, err)
		}
		got, err := readGRPCMessage(body)
		if err != nil {
			t.Fatalf("reading the answer to message %d: %v", i+1, err)
		}
		if want := fmt.Sprintf("echo %d: %s", i+1, msg); string(got) != want {
			t.Fatalf("answer %d: got %q, want %q", i+1, got, want)
		}
	}
	pw.Close()
	if rest, err := io.ReadAll(body); err != nil || len(rest) > 0 {
		t.Fatalf("after the client's end of stream: %q, %v; want the end", rest, err)
	}
	if got := a.resp.Trailer.Get("Grpc-Status"); got != "0" {
		t.Errorf("trailer Grpc-Status: got %q, want \"0\"", got)
	}
}
