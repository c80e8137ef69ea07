package ratelimit

import (
	"context"
	"net/http"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// throttled is the ResponseWriter of an answer whose bandwidth is
// limited: as nginx's limit_rate, by the time the request has run, the
// body may have sent after + rate × (elapsed + 1 s) bytes (nginx counts
// the head too, and time in whole seconds). Writes beyond that wait, the
// bytes already written flushed first so that they leave meanwhile.
// Flushes, hijacking (through Unwrap) and recorded statuses pass through.
type throttled struct {
	http.ResponseWriter
	ctx         context.Context
	rate, after int64
	began       time.Time
	sent        int64
	timer       *time.Timer
}

// Chunks written at once while throttling: at least minChunk bytes (so
// that a slow rate does not cost a write per byte), at most maxChunk.
const (
	minChunk = 1 << 10
	maxChunk = 64 << 10
)

func (t *throttled) start(w http.ResponseWriter, r *http.Request, rate, after int64) {
	t.ResponseWriter, t.rate, t.after, t.sent, t.began = w, rate, after, 0, time.Now()
	t.ctx = context.Background()
	if r != nil {
		t.ctx = r.Context()
	}
}

func (t *throttled) stop() { t.ResponseWriter, t.ctx = nil, nil }

// allowance is how many more bytes may be written now.
func (t *throttled) allowance() int64 {
	elapsed := time.Since(t.began) + time.Second
	return t.after + int64(float64(t.rate)*elapsed.Seconds()) - t.sent
}

// Write writes p as fast as the rate allows; it returns early with the
// request context's error when the client goes away.
func (t *throttled) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		chunk := int64(min(len(p), maxChunk))
		if allowed := t.allowance(); allowed < chunk {
			want := min(chunk, max(minChunk, t.rate/16))
			if allowed < want {
				if err := t.wait(time.Duration(float64(want-allowed) / float64(t.rate) * float64(time.Second))); err != nil {
					return written, err
				}
				continue
			}
			chunk = allowed
		}
		n, err := t.ResponseWriter.Write(p[:chunk])
		written += n
		t.sent += int64(n)
		p = p[n:]
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// wait flushes what was written and sleeps for d, or until the request
// ends.
func (t *throttled) wait(d time.Duration) error {
	t.Flush()
	if t.timer == nil {
		t.timer = time.NewTimer(d)
	} else {
		t.timer.Reset(d)
	}
	select {
	case <-t.timer.C:
		return nil
	case <-t.ctx.Done():
		t.timer.Stop()
		return t.ctx.Err()
	}
}

// Flush sends buffered data to the client.
func (t *throttled) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// RecordStatus passes a recorded status on.
func (t *throttled) RecordStatus(code int) { exchange.RecordStatus(t.ResponseWriter, code) }

// Unwrap returns the wrapped ResponseWriter.
func (t *throttled) Unwrap() http.ResponseWriter { return t.ResponseWriter }
