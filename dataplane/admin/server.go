package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/upstream"
)

// maxBodyBytes bounds an admin request body (a member list).
const maxBodyBytes = 8 << 20

// Handler returns the admin API's HTTP handler over b.
func Handler(b Backend) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/reload", func(w http.ResponseWriter, r *http.Request) { reload(w, b) })
	mux.HandleFunc("PUT /v1/upstreams/{pool}", func(w http.ResponseWriter, r *http.Request) { setMembers(w, r, b) })
	mux.HandleFunc("GET /v1/upstreams", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, b.Pools()) })
	mux.HandleFunc("GET /v1/upstreams/{pool}", func(w http.ResponseWriter, r *http.Request) {
		p, ok := b.Pool(r.PathValue("pool"))
		if !ok {
			writeError(w, http.StatusNotFound, fmt.Sprintf("no pool %q", r.PathValue("pool")))
			return
		}
		writeJSON(w, http.StatusOK, p)
	})
	mux.HandleFunc("GET /v1/status", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, b.Status()) })
	mux.HandleFunc("POST /v1/drain", func(w http.ResponseWriter, r *http.Request) { drain(w, r, b) })
	for path, allowed := range map[string]string{
		"/v1/reload":           "POST",
		"/v1/upstreams":        "GET",
		"/v1/upstreams/{pool}": "GET, PUT",
		"/v1/status":           "GET",
		"/v1/drain":            "POST",
	} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allowed)
			writeError(w, http.StatusMethodNotAllowed, r.Method+" is not allowed here; use "+allowed)
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint; see GET /v1/status, GET /v1/upstreams, POST /v1/reload, PUT /v1/upstreams/{pool}, POST /v1/drain")
	})
	return mux
}

func reload(w http.ResponseWriter, b Backend) {
	gen, err := b.Reload()
	var refused *ConfigError
	switch {
	case errors.As(err, &refused):
		writeJSON(w, http.StatusUnprocessableEntity, Refused{Errors: refused.Problems})
	case err != nil:
		writeError(w, http.StatusInternalServerError, err.Error())
	default:
		writeJSON(w, http.StatusOK, Reloaded{Generation: gen})
	}
}

// drain answers the status once the drain delay is over; a client that
// goes away before leaves the drain running.
func drain(w http.ResponseWriter, r *http.Request, b Backend) {
	select {
	case <-b.Drain():
		writeJSON(w, http.StatusOK, b.Status())
	case <-r.Context().Done():
	}
}

func setMembers(w http.ResponseWriter, r *http.Request, b Backend) {
	pool := r.PathValue("pool")
	members, err := decodeMembers(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var invalid *MembersError
	switch err := b.SetMembers(pool, members); {
	case errors.As(err, &invalid):
		writeError(w, http.StatusBadRequest, invalid.Error())
	case errors.Is(err, upstream.ErrUnknownPool):
		writeError(w, http.StatusNotFound, fmt.Sprintf("no pool %q", pool))
	case errors.Is(err, upstream.ErrStaticPool):
		writeError(w, http.StatusConflict, fmt.Sprintf("pool %q: %v", pool, err))
	case err != nil:
		writeError(w, http.StatusInternalServerError, err.Error())
	default:
		writeJSON(w, http.StatusOK, map[string]any{"pool": pool, "members": len(members)})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{Error: msg})
}

// Listen creates the admin socket at path with mode 0600, replacing a stale
// socket left by an earlier process but refusing to replace anything else.
func Listen(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	// The umask is process-wide; ramjetd listens on its socket at start,
	// before anything else creates files, so the socket is never visible
	// with wider permissions even for an instant.
	old := syscall.Umask(0o177)
	l, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// NewServer returns the http.Server of the admin API.
func NewServer(b Backend) *http.Server {
	return &http.Server{
		Handler:           Handler(b),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       time.Minute,
	}
}
