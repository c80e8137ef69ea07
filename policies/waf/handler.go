package waf

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"

	"github.com/corazawaf/coraza/v3/types"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
	"github.com/ramjet-dev/ramjet/dataplane/proxy"
	"github.com/ramjet-dev/ramjet/policies/bodylimit"
)

// Handler inspects each request with an Engine before passing it to Next:
// request headers (phase 1), then the body (phase 2) when the rules read
// it, which is then sent on to Next byte for byte. A rule that interrupts
// the request (SecRuleEngine On) answers it here. Responses are not
// inspected (phases 3 and 4 do not run); phase 5 (logging) runs after Next
// returns.
type Handler struct {
	engine        *Engine
	transactionID string
	log           *slog.Logger
	next          exchange.Handler
}

// New returns the Handler of cfg running on engine (built from cfg, or
// from a configuration with the same Key); audit lines go to log.
func New(engine *Engine, cfg *config.WAF, log *slog.Logger, next exchange.Handler) *Handler {
	if log == nil {
		log = slog.Default()
	}
	return &Handler{engine: engine, transactionID: cfg.TransactionID, log: log, next: next}
}

var _ exchange.Handler = (*Handler)(nil)

// Serve runs the request phases, then Next unless a rule interrupted.
func (h *Handler) Serve(w http.ResponseWriter, x *exchange.Request) {
	tx := h.transaction(x.HTTP)
	defer tx.Close()
	if tx.IsRuleEngineOff() {
		h.next.Serve(w, x)
		return
	}
	blocked, readErr := h.inspect(tx, x)
	switch {
	case readErr != nil:
		bodyError(w, x.HTTP, readErr)
	case blocked != nil:
		answer(w, x.HTTP, blocked)
	default:
		h.next.Serve(w, x)
	}
	tx.ProcessLogging()
	h.audit(tx, x, blocked)
}

// transaction starts the request's transaction with its ID.
func (h *Handler) transaction(r *http.Request) types.Transaction {
	switch h.transactionID {
	case "":
		return h.engine.waf.NewTransaction()
	case config.TransactionIDRequestID:
		proxy.EnsureRequestID(r.Header)
		return h.engine.waf.NewTransactionWithID(r.Header.Get("X-Request-Id"))
	}
	return h.engine.waf.NewTransactionWithID(h.transactionID)
}

// inspect runs phases 1 and 2, and returns the interruption of a rule, or
// the error that reading the body met.
func (h *Handler) inspect(tx types.Transaction, x *exchange.Request) (*types.Interruption, error) {
	r := x.HTTP
	port, _ := strconv.Atoi(x.Port)
	tx.ProcessConnection(x.ClientIP.String(), remotePort(r), "", port)
	uri := r.RequestURI
	if uri == "" {
		uri = r.URL.RequestURI()
	}
	tx.ProcessURI(uri, r.Method, r.Proto)
	tx.AddRequestHeader("Host", r.Host)
	tx.SetServerName(hostOnly(r.Host))
	for name, values := range r.Header {
		for _, v := range values {
			tx.AddRequestHeader(name, v)
		}
	}
	if it := tx.ProcessRequestHeaders(); it != nil {
		return it, nil
	}
	if tx.IsRequestBodyAccessible() && r.Body != nil && r.Body != http.NoBody {
		it, _, err := tx.ReadRequestBodyFrom(r.Body)
		if err != nil {
			return nil, err
		}
		if it != nil {
			return it, nil
		}
		buffered, err := tx.RequestBodyReader()
		if err != nil {
			return nil, err
		}
		// What the rules read goes on first, then what they did not
		// (beyond SecRequestBodyLimit with ProcessPartial).
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(buffered, r.Body), r.Body}
	}
	it, err := tx.ProcessRequestBody()
	return it, err
}

// answer writes the answer of an interruption: a redirect for the
// redirect action, else the rule's status (403 without one), closing the
// connection for drop.
func answer(w http.ResponseWriter, r *http.Request, it *types.Interruption) {
	if it.Action == "redirect" && it.Data != "" {
		w.Header().Set("Location", it.Data)
		status := it.Status
		if status < 300 || status > 399 {
			status = http.StatusFound
		}
		w.WriteHeader(status)
		return
	}
	status := blockStatus(it)
	if it.Action == "drop" {
		w.Header().Set("Connection", "close")
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		io.WriteString(w, http.StatusText(status)+": the request was refused by the web application firewall\n")
	}
}

// blockStatus is the status of an interruption that is not a redirect:
// the rule's, or 403 when it names none (or names no error).
func blockStatus(it *types.Interruption) int {
	if it.Status < 400 || it.Status > 599 {
		return http.StatusForbidden
	}
	return it.Status
}

// bodyError answers a body that could not be read: 413 over the route's
// body limit, 400 otherwise.
func bodyError(w http.ResponseWriter, r *http.Request, err error) {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		bodylimit.TooLarge(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusBadRequest)
	io.WriteString(w, "Bad Request: the request body could not be read\n")
}

func remotePort(r *http.Request) int {
	_, port, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(port)
	return n
}

func hostOnly(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return host
}
