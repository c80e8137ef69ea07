package proxy

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/upstream"
)

// Mirror is a pool that receives copies of a route's requests (the Gateway
// API's RequestMirror).
type Mirror struct {
	Pool *upstream.Pool
	// Transport replaces the pool's (a route variant); nil uses the pool's.
	Transport *upstream.Transport
	// Numerator out of Denominator requests are copied; a zero
	// Denominator copies every request.
	Numerator, Denominator uint32
	// Host, when set, is the Host header of the copies.
	Host string
	// Path, when set, is the path of the copies (with the client's query).
	Path string
	// RequestURI sends the copies the path and query the client sent,
	// before any rewrite (nginx's $request_uri).
	RequestURI bool
	// NoBody sends the copies without the request's body; requests with a
	// streamed body are then copied too.
	NoBody bool
}

// sampled reports whether this request is copied.
func (m *Mirror) sampled() bool {
	return m.Denominator == 0 || rand.Uint32N(m.Denominator) < m.Numerator
}

// MirrorTimeout bounds one mirrored request, answer included.
const MirrorTimeout = 30 * time.Second

// DefaultMirrorsInFlight is the bound of a MirrorLimit made for a Handler
// without one.
const DefaultMirrorsInFlight = 256

// mirrorDrainLimit is how much of a mirrored answer is read, so that its
// connection can be kept, before it is closed.
const mirrorDrainLimit = 64 << 10

// MirrorLimit bounds the mirrored requests in flight, across the handlers
// that share it; a copy over the bound is not sent. It takes no lock.
type MirrorLimit struct {
	max      int64
	inFlight atomic.Int64
	// Dropped counts the copies not sent because of the bound.
	Dropped atomic.Uint64
}

// NewMirrorLimit returns a limit of max copies in flight.
func NewMirrorLimit(max int) *MirrorLimit { return &MirrorLimit{max: int64(max)} }

func (l *MirrorLimit) acquire() bool {
	if l.inFlight.Add(1) > l.max {
		l.inFlight.Add(-1)
		l.Dropped.Add(1)
		return false
	}
	return true
}

func (l *MirrorLimit) release() { l.inFlight.Add(-1) }

// InFlight returns the mirrored requests being sent.
func (l *MirrorLimit) InFlight() int64 { return l.inFlight.Load() }

// MirrorBodyLimit bounds the body a copy carries: a request with a larger
// body (or a streamed one) is copied only by mirrors that send no body.
// With the bound of copies in flight, it bounds the memory copies hold.
const MirrorBodyLimit = ReplayBodyLimit

// mirror sends the copies of the prepared request, each in its own
// goroutine. Upgrades are not copied, nor requests whose body is streamed
// or over MirrorBodyLimit, except by mirrors that send no body.
func (f *forwarding) mirror() {
	if len(f.h.route.Mirrors) == 0 || f.first.Header.Get("Upgrade") != "" {
		return
	}
	bodyFits := f.body.streamed == nil && len(f.body.replay) <= MirrorBodyLimit
	grpc := isGRPC(f.x.HTTP)
	for i := range f.h.route.Mirrors {
		m := &f.h.route.Mirrors[i]
		if (!bodyFits && !m.NoBody) || (grpc && !m.Pool.Scheme.IsHTTP2()) || !m.sampled() {
			continue
		}
		if !f.h.mirrors.acquire() {
			continue
		}
		key, _ := hashKey(m.Pool, f.x)
		go sendCopy(m, f.copyFor(m), key, f.h.mirrors, f.h.log)
	}
}

// copyFor builds the copy of the outgoing request for m: its own context
// (a copy outlives the request), header and URL.
func (f *forwarding) copyFor(m *Mirror) *http.Request {
	out := f.first.WithContext(context.Background())
	u := f.firstURL
	u.Scheme = "http"
	if m.Pool.Scheme.UsesTLS() {
		u.Scheme = "https"
	}
	f.copyPath(m, &u)
	out.URL = &u
	out.Header = f.first.Header.Clone()
	out.Trailer = nil
	if m.Host != "" {
		out.Host = m.Host
	}
	if m.NoBody {
		out.Body, out.GetBody, out.ContentLength, out.TransferEncoding = nil, nil, 0, nil
		return out
	}
	out.Body, out.GetBody, out.ContentLength = f.body.forRequest(out.ContentLength)
	return out
}

// copyPath sets the path (and query) of a copy's URL: the forwarded
// request's, m's fixed path with the client's query, or the client's path
// and query before any rewrite.
func (f *forwarding) copyPath(m *Mirror, u *url.URL) {
	client := f.x.HTTP.URL
	switch {
	case m.Path != "":
		u.Opaque, u.Path, u.RawPath, u.RawQuery = "", m.Path, escapePath(m.Path), client.RawQuery
	case m.RequestURI:
		u.Opaque, u.Path, u.RawPath, u.RawQuery = "", client.Path, client.RawPath, client.RawQuery
		if verbatimPath(u.RawPath) {
			u.Opaque = u.RawPath
		}
	}
}

// sendCopy sends one copy to the member of m's pool that key picks, and
// discards the answer. It runs after the request may have ended: it uses
// nothing of the request's but out.
func sendCopy(m *Mirror, out *http.Request, key uint64, limit *MirrorLimit, log *slog.Logger) {
	defer limit.release()
	set := m.Pool.Members()
	i := m.Pool.Algorithm.Pick(set, key, nil)
	if i < 0 {
		return
	}
	member := set.Member(i)
	member.Stats.InFlight.Add(1)
	member.Stats.Requests.Add(1)
	defer member.Stats.InFlight.Add(-1)
	ctx, cancel := context.WithTimeout(out.Context(), MirrorTimeout)
	defer cancel()
	out = out.WithContext(ctx)
	out.URL.Host = member.Address
	transport := m.Transport
	if transport == nil {
		transport = m.Pool.Transport
	}
	resp, err := transport.RoundTrip(out)
	if err != nil {
		member.Stats.Failures.Add(1)
		log.Debug("proxy: mirrored request failed", "pool", m.Pool.Name, "error", err)
		return
	}
	io.CopyN(io.Discard, resp.Body, mirrorDrainLimit)
	resp.Body.Close()
}
