package http1

import (
	"context"
	"slices"
	"sync"
)

// requestContext is the context of a request Server serves: the
// connection's values, and an end that comes when the handler returns or
// the client goes away. It costs one allocation where context.WithCancel
// on a connection context costs several and a registration with it; and
// Client connections that watch it (conn.watch) are registered without
// allocating, where context.AfterFunc allocates three times.
//
// It implements the AfterFunc method that package context looks for, so
// that contexts derived from it (WithCancel, WithTimeout, AfterFunc) follow
// its end without a goroutine each; their end comes from a goroutine, as
// context.AfterFunc's functions do. (A context derived from a value context
// over it, WithCancel(WithValue(ctx, ...)), does get a goroutine.)
//
// The connection's context never ends in ramjetd (it carries values). One
// that can end is followed too: the request ends with it, with its error.
type requestContext struct {
	context.Context             // the connection's
	stopParent      func() bool // the watch of a connection context that can end

	mu    sync.Mutex
	done  chan struct{} // made by the first Done
	err   error
	conns []*conn        // Client connections to break at the end
	funcs []*contextFunc // registered with AfterFunc
	room  [1]*conn       // conns' first backing array
}

// contextFunc is one function registered with requestContext.AfterFunc.
type contextFunc struct{ f func() }

func newRequestContext(parent context.Context) *requestContext {
	c := &requestContext{Context: parent}
	c.conns = c.room[:0]
	if parent.Done() != nil {
		c.stopParent = context.AfterFunc(parent, func() { c.end(parent.Err()) })
	}
	return c
}

// Done returns a channel closed at the end of the request.
func (c *requestContext) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.err != nil {
			close(c.done)
		}
	}
	return c.done
}

// Err returns context.Canceled once the request has ended (or the error of
// the connection's context, when that ended it), nil before.
func (c *requestContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// AfterFunc arranges for f to run in its own goroutine at the end of the
// request, as context.AfterFunc does; stop unregisters it and reports
// whether it did so before f was started.
func (c *requestContext) AfterFunc(f func()) (stop func() bool) {
	cf := &contextFunc{f: f}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	c.funcs = append(c.funcs, cf)
	c.mu.Unlock()
	return func() bool { return unregister(c, &c.funcs, cf) }
}

// watch registers cn, whose deadline cancel breaks; false when the request
// has ended already.
func (c *requestContext) watch(cn *conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return false
	}
	c.conns = append(c.conns, cn)
	return true
}

// unwatch unregisters cn, and reports whether it was still registered:
// false when the end of the request broke it.
func (c *requestContext) unwatch(cn *conn) bool {
	return unregister(c, &c.conns, cn)
}

// unregister removes v from c's list, and reports whether it was there:
// false when the end of the request took the list.
func unregister[T comparable](c *requestContext, list *[]T, v T) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(*list, v)
	if i < 0 {
		return false
	}
	*list = slices.Delete(*list, i, i+1)
	return true
}

// cancel ends the request: Done's channel closes, watched connections
// break, and AfterFunc's functions start. Later calls do nothing.
func (c *requestContext) cancel() {
	c.end(context.Canceled)
}

func (c *requestContext) end(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	conns, funcs := c.conns, c.funcs
	c.conns, c.funcs = nil, nil
	c.mu.Unlock()
	if c.stopParent != nil {
		c.stopParent()
	}
	for _, cn := range conns {
		cn.breakForCancel()
	}
	for _, cf := range funcs {
		go cf.f()
	}
}
