package httpecho

import (
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
)

// retries counts the tries of each retry simulation, by its uuid, for the
// suite's HTTPRouteRetry test: /retry/...?uuid=U&succeedAfter=N fails the
// first N requests of U, then echoes. A failure is a connection reset
// (TCP RST before any answer) unless responseCode=C asks for that status;
// delayRetry=<duration> waits before failing.
type retries struct {
	mu    sync.Mutex
	tries map[string]int
}

func newRetries() *retries { return &retries{tries: make(map[string]int)} }

// fails counts one try of id and reports whether it must fail.
func (r *retries) fails(id string, succeedAfter int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tries[id] >= succeedAfter {
		return false
	}
	r.tries[id]++
	return true
}

func (h *Handler) retry(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id := q.Get("uuid")
	if id == "" {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte("uuid is required"))
		return
	}
	succeedAfter, err := strconv.Atoi(q.Get("succeedAfter"))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte("succeedAfter is required"))
		return
	}
	if !h.retries.fails(id, succeedAfter) {
		h.Echo(w, r)
		return
	}
	if err := delay(r, "delayRetry"); err != nil {
		fail(w, err)
		return
	}
	if code, err := strconv.Atoi(q.Get("responseCode")); err == nil && code >= 100 && code <= 999 {
		w.WriteHeader(code)
		return
	}
	if err := reset(w); err != nil {
		fail(w, err)
	}
}

// reset closes the request's connection with a TCP RST (linger 0), so the
// client sees a reset instead of an answer.
func reset(w http.ResponseWriter) error {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return errors.New("retry: this connection cannot be reset (HTTP/2)")
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return err
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	return conn.Close()
}
