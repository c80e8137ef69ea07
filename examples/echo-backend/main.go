// Command echo-backend is the backend of `make demo-ramjetd`: an HTTP server that
// answers every request with one line of plain text saying which backend
// answered, what it received and the forwarding headers the proxy added.
//
//	echo-backend --listen 127.0.0.1:9001 --name web-a
//
// An answer looks like this (one line):
//
//	backend=web-a method=GET host=shop.demo.test path=/cart x-forwarded-for=127.0.0.1 x-forwarded-proto=http x-request-id=5c0f...
//
// The backend's name comes first, so that `cut -d' ' -f1` counts which
// backend answered. GET /sse is a stream of server-sent events instead: three
// events one second apart, to show that the proxy streams.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sseEvents is how many events GET /sse sends, one per sseInterval.
const (
	sseEvents   = 3
	sseInterval = time.Second
)

func main() {
	listen := flag.String("listen", "127.0.0.1:9001", "address to listen on, host:port")
	name := flag.String("name", "echo", "name of this backend, the first word of every answer")
	flag.Parse()
	log.SetPrefix(*name + " ")
	if flag.NArg() > 0 {
		log.Fatalf("unexpected arguments %q; the flags are --listen and --name", flag.Args())
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{
		Handler:           &echo{name: *name},
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       time.Minute,
	}
	// SIGTERM stops gracefully. SIGINT is left alone: run by hand, Ctrl-C
	// ends the process; started in the background by demo.sh, it ignores
	// Ctrl-C and the script stops it.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		// Give requests in flight (an SSE stream) a moment, then close.
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdown); err != nil {
			srv.Close()
		}
	}()
	log.Printf("listening on %s", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
	log.Print("stopped")
}

// echo is the handler of every request.
type echo struct {
	name string
}

func (e *echo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	log.Printf("%s %s %s %s", r.Method, r.Host, r.URL.RequestURI(), r.Proto)
	if r.URL.Path == "/sse" {
		e.events(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, e.describe(r))
}

// describe is the line that says what this backend received.
func (e *echo) describe(r *http.Request) string {
	fields := []struct{ key, value string }{
		{"backend", e.name},
		{"method", r.Method},
		{"host", r.Host},
		{"path", r.URL.RequestURI()},
		{"x-forwarded-for", r.Header.Get("X-Forwarded-For")},
		{"x-forwarded-proto", r.Header.Get("X-Forwarded-Proto")},
		{"x-request-id", r.Header.Get("X-Request-Id")},
	}
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.key + "=" + value(f.value)
	}
	return strings.Join(parts, " ")
}

// value writes "-" for an empty value and quotes one with spaces or quotes,
// so that every field stays one word.
func value(v string) string {
	switch {
	case v == "":
		return "-"
	case strings.ContainsAny(v, " \t\"\\"):
		return strconv.Quote(v)
	}
	return v
}

// events streams sseEvents server-sent events, flushing each one, and stops
// early when the client goes away.
func (e *echo) events(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	rc := http.NewResponseController(w)
	for i := 1; i <= sseEvents; i++ {
		if i > 1 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(sseInterval):
			}
		}
		fmt.Fprintf(w, "id: %d\nevent: tick\ndata: %s event %d of %d at %s\n\n",
			i, e.name, i, sseEvents, time.Now().Format("15:04:05"))
		if err := rc.Flush(); err != nil {
			return
		}
	}
}
