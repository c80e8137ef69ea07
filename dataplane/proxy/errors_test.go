package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/ramjet-dev/ramjet/dataplane/upstream"
)

// timeoutError is a net.Error that timed out.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func dialError(err error) error {
	return &upstream.DialError{Address: "127.0.0.1:1", Err: &net.OpError{Op: "dial", Net: "tcp", Err: err}}
}

const (
	sentenceUnreachable = "the backend could not be reached"
	sentenceNoAccept    = "the backend did not accept a connection in time"
	sentenceNoAnswer    = "the backend did not answer in time"
	sentenceBroken      = "the backend closed the connection without a valid answer"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantReason string
	}{
		{name: "nil", err: nil, wantStatus: 503, wantReason: errNoMembers.Error()},
		{name: "no members", err: errNoMembers, wantStatus: 503, wantReason: errNoMembers.Error()},
		{name: "no members wrapped", err: fmt.Errorf("pool x: %w", errNoMembers), wantStatus: 503, wantReason: errNoMembers.Error()},
		{name: "body too large", err: errBodyTooLarge, wantStatus: 413, wantReason: errBodyTooLarge.Error()},
		{name: "client body", err: errClientBody, wantStatus: 400, wantReason: errClientBody.Error()},
		{name: "gRPC to HTTP/1.1", err: errGRPCToHTTP1, wantStatus: 502, wantReason: errGRPCToHTTP1.Error()},
		{name: "bad upgrade", err: errBadUpgrade, wantStatus: 502, wantReason: errBadUpgrade.Error()},
		{name: "connection refused", err: dialError(syscall.ECONNREFUSED), wantStatus: 502, wantReason: sentenceUnreachable},
		{name: "TLS handshake failed", err: &upstream.DialError{Address: "a:1", Err: errors.New("TLS: bad certificate")}, wantStatus: 502, wantReason: sentenceUnreachable},
		{name: "dial error wrapped", err: fmt.Errorf("round trip: %w", dialError(syscall.ECONNREFUSED)), wantStatus: 502, wantReason: sentenceUnreachable},
		{name: "connect timeout", err: dialError(timeoutError{}), wantStatus: 504, wantReason: sentenceNoAccept},
		{name: "connect deadline", err: dialError(os.ErrDeadlineExceeded), wantStatus: 504, wantReason: sentenceNoAccept},
		{name: "response timeout", err: timeoutError{}, wantStatus: 504, wantReason: sentenceNoAnswer},
		{name: "read deadline", err: &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, wantStatus: 504, wantReason: sentenceNoAnswer},
		{name: "context deadline", err: context.DeadlineExceeded, wantStatus: 504, wantReason: sentenceNoAnswer},
		{name: "broken connection", err: io.ErrUnexpectedEOF, wantStatus: 502, wantReason: sentenceBroken},
		{name: "connection reset", err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, wantStatus: 502, wantReason: sentenceBroken},
		{name: "other", err: errors.New("malformed HTTP response"), wantStatus: 502, wantReason: sentenceBroken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, reason := classify(tt.err)
			if status != tt.wantStatus || reason != tt.wantReason {
				t.Errorf("classify(%v) = (%d, %q), want (%d, %q)", tt.err, status, reason, tt.wantStatus, tt.wantReason)
			}
		})
	}
}

func TestWriteError(t *testing.T) {
	tests := []struct {
		name       string
		method     string
		err        error
		wantStatus int
		wantBody   string
		wantGRPC   bool
	}{
		{name: "GET", method: "GET", err: errNoMembers, wantStatus: 503,
			wantBody: "Service Unavailable: no backend is available for this route\n"},
		{name: "HEAD has no body", method: "HEAD", err: errNoMembers, wantStatus: 503, wantBody: ""},
		{name: "POST too large", method: "POST", err: errBodyTooLarge, wantStatus: 413,
			wantBody: "Request Entity Too Large: the request body is larger than this route allows\n"},
		{name: "unreachable", method: "GET", err: dialError(syscall.ECONNREFUSED), wantStatus: 502,
			wantBody: "Bad Gateway: the backend could not be reached\n"},
		{name: "gRPC", method: "POST", err: errGRPCToHTTP1, wantStatus: 502,
			wantBody: "Bad Gateway: " + errGRPCToHTTP1.Error() + "\n", wantGRPC: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			writeError(w, httptest.NewRequest(tt.method, "/", nil), tt.err)
			if w.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d", w.Code, tt.wantStatus)
			}
			if got := w.Body.String(); got != tt.wantBody {
				t.Errorf("body = %q, want %q", got, tt.wantBody)
			}
			h := w.Header()
			if got := h.Get("Content-Type"); got != "text/plain; charset=utf-8" {
				t.Errorf("Content-Type = %q, want text/plain; charset=utf-8", got)
			}
			if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q, want nosniff", got)
			}
			wantStatus, wantMessage := "", ""
			if tt.wantGRPC {
				wantStatus, wantMessage = "14", "ramjet: backend speaks HTTP/1.1; set backend-protocol: GRPC"
			}
			if got := h.Get("Grpc-Status"); got != wantStatus {
				t.Errorf("Grpc-Status = %q, want %q", got, wantStatus)
			}
			if got := h.Get("Grpc-Message"); got != wantMessage {
				t.Errorf("Grpc-Message = %q, want %q", got, wantMessage)
			}
		})
	}
}

// TestErrorsNameNothing checks that no answer names a pool, member or
// address, whatever the error wraps.
func TestErrorsNameNothing(t *testing.T) {
	for _, err := range []error{
		dialError(syscall.ECONNREFUSED), dialError(timeoutError{}), &net.OpError{Op: "read", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, Err: syscall.ECONNRESET},
	} {
		w := httptest.NewRecorder()
		writeError(w, httptest.NewRequest("GET", "/", nil), err)
		if body := w.Body.String(); containsAny(body, "127.0.0.1", ":1", "dial", "tcp") {
			t.Errorf("answer to %v = %q, want no address or transport detail", err, body)
		}
	}
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
