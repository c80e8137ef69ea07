package basicauth

import (
	"context"
	"time"
)

// Limiter bounds the password hashes verified at once across the routes
// that share it. A wrong password always costs a full hash (bcrypt: tens of
// milliseconds of CPU, more at high costs), so without a bound a stream of
// guesses for one user would take every core from every tenant. A request
// that waits longer than the limiter's patience for a turn is answered 503.
type Limiter struct {
	slots    chan struct{}
	patience time.Duration
}

// NewLimiter allows n verifications at once, each waiting at most patience
// for a turn. n below 1 means 1.
func NewLimiter(n int, patience time.Duration) *Limiter {
	return &Limiter{slots: make(chan struct{}, max(n, 1)), patience: patience}
}

// acquire takes a turn, waiting while ctx lasts and patience allows; it
// reports whether a turn was taken. A nil Limiter always grants one.
func (l *Limiter) acquire(ctx context.Context) bool {
	if l == nil {
		return true
	}
	select {
	case l.slots <- struct{}{}:
		return true
	default:
	}
	timer := time.NewTimer(l.patience)
	defer timer.Stop()
	select {
	case l.slots <- struct{}{}:
		return true
	case <-ctx.Done():
	case <-timer.C:
	}
	return false
}

// release gives a turn back.
func (l *Limiter) release() {
	if l != nil {
		<-l.slots
	}
}
