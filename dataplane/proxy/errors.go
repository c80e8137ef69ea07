package proxy

import (
	"errors"
	"net"
	"net/http"

	"github.com/ramjet-dev/ramjet/dataplane/upstream"
)

// Errors answered to the client. Their text is the body of the answer: it
// says what happened without naming pools, members or addresses.
var (
	errNoMembers    = errors.New("no backend is available for this route")
	errGRPCToHTTP1  = errors.New("this request is gRPC, but the route's backend speaks HTTP/1.1; set the annotation nginx.ingress.kubernetes.io/backend-protocol: \"GRPC\" (or \"GRPCS\") on the Ingress, or scheme: h2c (or h2) on the pool")
	errBodyTooLarge = errors.New("the request body is larger than this route allows")
	errClientBody   = errors.New("the request body could not be read")
	errBodyTimeout  = errors.New("the request body did not arrive in time")
	errBadUpgrade   = errors.New("the backend did not switch to the protocol the request asked for")
	errBadHead      = errors.New("the backend sent a malformed response head")
	// errRequestTimeout is the route's request timeout passing before an
	// answer.
	errRequestTimeout = errors.New("the route's request timeout passed before the backend answered")
)

// writeError answers with the status that fits err and a short plain-text
// body.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, reason := classify(err)
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	if status == http.StatusRequestEntityTooLarge || status == http.StatusRequestTimeout {
		// The rest of the body is not read: the connection cannot be reused.
		h.Set("Connection", "close")
	}
	if err == errGRPCToHTTP1 {
		h.Set("Grpc-Status", "14") // UNAVAILABLE
		h.Set("Grpc-Message", "ramjet: backend speaks HTTP/1.1; set backend-protocol: GRPC")
	}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write([]byte(http.StatusText(status) + ": " + reason + "\n"))
	}
}

// classify maps the last failure to a status and the sentence the client
// reads.
func classify(err error) (int, string) {
	var netErr net.Error
	switch {
	case err == nil, errors.Is(err, errNoMembers):
		return http.StatusServiceUnavailable, errNoMembers.Error()
	case errors.Is(err, errBodyTooLarge):
		return http.StatusRequestEntityTooLarge, err.Error()
	case errors.Is(err, errClientBody):
		return http.StatusBadRequest, err.Error()
	case errors.Is(err, errBodyTimeout):
		return http.StatusRequestTimeout, err.Error()
	case errors.Is(err, errRequestTimeout):
		return http.StatusGatewayTimeout, err.Error()
	case errors.Is(err, errGRPCToHTTP1), errors.Is(err, errBadUpgrade), errors.Is(err, errBadHead):
		return http.StatusBadGateway, err.Error()
	case errors.As(err, &netErr) && netErr.Timeout():
		if upstream.IsDialError(err) {
			return http.StatusGatewayTimeout, "the backend did not accept a connection in time"
		}
		return http.StatusGatewayTimeout, "the backend did not answer in time"
	case upstream.IsDialError(err):
		return http.StatusBadGateway, "the backend could not be reached"
	}
	return http.StatusBadGateway, "the backend closed the connection without a valid answer"
}
