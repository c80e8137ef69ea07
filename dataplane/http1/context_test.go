package http1

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

type ctxKey struct{}

func TestRequestContextEnds(t *testing.T) {
	parent := context.WithValue(context.Background(), ctxKey{}, "conn")
	ctx := newRequestContext(parent)
	early := ctx.Done()
	if ctx.Err() != nil {
		t.Fatalf("Err before the end = %v", ctx.Err())
	}
	if got := ctx.Value(ctxKey{}); got != "conn" {
		t.Errorf("Value = %v, want the connection's", got)
	}
	ctx.cancel()
	ctx.cancel() // a second end does nothing
	for name, done := range map[string]<-chan struct{}{"made before the end": early, "made after": ctx.Done()} {
		select {
		case <-done:
		default:
			t.Errorf("Done channel %s is open after the end", name)
		}
	}
	if !errors.Is(ctx.Err(), context.Canceled) || !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Errorf("Err = %v, Cause = %v, want context.Canceled", ctx.Err(), context.Cause(ctx))
	}
}

func TestRequestContextAfterFunc(t *testing.T) {
	ctx := newRequestContext(context.Background())
	ran := make(chan string, 3)
	stopped := context.AfterFunc(ctx, func() { ran <- "stopped" })
	context.AfterFunc(ctx, func() { ran <- "kept" })
	if !stopped() {
		t.Fatal("stop before the end reported false")
	}
	if stopped() {
		t.Fatal("a second stop reported true")
	}
	derived, cancelDerived := context.WithTimeout(ctx, time.Hour)
	defer cancelDerived()
	ctx.cancel()
	if got := receive(t, ran); got != "kept" {
		t.Fatalf("ran %q, want only the function not stopped", got)
	}
	select {
	case <-derived.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a context derived from the request's did not end with it")
	}
	late := context.AfterFunc(ctx, func() { ran <- "late" })
	if got := receive(t, ran); got != "late" {
		t.Fatalf("a function registered after the end: ran %q", got)
	}
	if late() {
		t.Error("stop of a function registered after the end reported true")
	}
	select {
	case got := <-ran:
		t.Errorf("%q ran as well", got)
	case <-time.After(50 * time.Millisecond):
	}
}

func receive(t *testing.T, c <-chan string) string {
	t.Helper()
	select {
	case s := <-c:
		return s
	case <-time.After(5 * time.Second):
		t.Fatal("nothing ran")
		return ""
	}
}

// The end of a request breaks the Client connections watching it, and
// only those: one unwatched before the end stays usable.
func TestRequestContextBreaksWatchedConns(t *testing.T) {
	pair := func() *conn {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		return newConn(&Client{}, "member", a)
	}
	ctx := newRequestContext(context.Background())
	watched, released := pair(), pair()
	watched.watch(ctx)
	released.watch(ctx)
	if !released.unwatch() {
		t.Fatal("unwatch before the end reported the connection unusable")
	}
	ctx.cancel()
	if watched.unwatch() {
		t.Error("unwatch after the end reported the connection usable")
	}
	if _, err := watched.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read on the broken connection: %v, want a passed deadline", err)
	}
	if released.canceled.Load() {
		t.Error("the end broke a connection unwatched before it")
	}
	late := pair()
	late.watch(ctx)
	if late.unwatch() {
		t.Error("a connection watching an ended request is usable")
	}
}

// A connection context that can end ends its requests, with its error.
func TestRequestContextFollowsItsParent(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration // 0: the parent is canceled instead
		wantErr error
	}{
		{"canceled", 0, context.Canceled},
		{"past its deadline", time.Millisecond, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent, cancel := context.WithCancel(context.Background())
			if tt.timeout > 0 {
				parent, cancel = context.WithTimeout(context.Background(), tt.timeout)
			}
			defer cancel()
			ctx := newRequestContext(parent)
			if tt.timeout == 0 {
				cancel()
			}
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("the request did not end with its connection's context")
			}
			if !errors.Is(ctx.Err(), tt.wantErr) {
				t.Errorf("Err = %v, want %v", ctx.Err(), tt.wantErr)
			}
		})
	}
	// The request's own end stops following the parent.
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx := newRequestContext(parent)
	ctx.cancel()
	if ctx.stopParent() {
		t.Error("the watch of the parent was still registered after the request's end")
	}
}
