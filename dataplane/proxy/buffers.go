package proxy

import "sync"

// copyBufferSize is the size of the buffers that copy response bodies.
const copyBufferSize = 32 << 10

// BufferPool lends copy buffers, so that proxying a body allocates nothing.
type BufferPool struct{ pool sync.Pool }

// NewBufferPool returns an empty pool of 32 KiB buffers.
func NewBufferPool() *BufferPool {
	return &BufferPool{pool: sync.Pool{New: func() any {
		b := make([]byte, copyBufferSize)
		return &b
	}}}
}

// Get returns a buffer.
func (p *BufferPool) Get() *[]byte { return p.pool.Get().(*[]byte) }

// Put returns a buffer for reuse.
func (p *BufferPool) Put(b *[]byte) { p.pool.Put(b) }
