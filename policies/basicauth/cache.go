package basicauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"hash"
	"sync"
	"sync/atomic"
)

// Cache remembers credentials that verified against one File, so that a
// valid user pays for a full hash verification once and not per request.
// Entries are HMAC-SHA256 sums under a key drawn at random for each Cache:
// neither passwords nor unkeyed hashes of them are kept. The request path
// takes no mutex of its own: a lookup is a lock-free sync.Map load, and an
// insert, once per user and generation, only locks sync.Map's node for the
// key.
//
// The size bound is kept by generations: when an insert would make the
// current map hold more than size entries, a fresh empty map replaces it,
// and each valid user then verifies once more. Failed attempts are never
// inserted, so filling the cache takes valid credentials, and the bound
// caps its memory whatever is sent. Entries do not expire: they live as
// long as the File they were verified against.
//
// A nil *Cache caches nothing. A Cache is meant for one File (the daemon
// keeps one per File.Digest and drops it when the file changes); the
// digest is part of every entry, so a Cache shared by mistake with another
// File can never let that File's users in with the first File's passwords.
type Cache struct {
	size int64
	gen  atomic.Pointer[generation]
	macs sync.Pool // of hash.Hash, HMAC-SHA256 under the cache's key
}

// generation is one map of the cache with its count of reserved slots.
type generation struct {
	m sync.Map // [sha256.Size]byte → struct{}
	n atomic.Int64
}

// NewCache returns a Cache that holds at most size entries; size 0 or less
// returns nil, a Cache that caches nothing.
func NewCache(size int) *Cache {
	if size <= 0 {
		return nil
	}
	var key [32]byte
	rand.Read(key[:]) // never fails (crypto/rand)
	c := &Cache{size: int64(size)}
	c.macs.New = func() any { return hmac.New(sha256.New, key[:]) }
	c.gen.Store(new(generation))
	return c
}

var nul = []byte{0}

// cacheKey is an entry of the cache.
type cacheKey [sha256.Size]byte

// key returns HMAC(cache key, digest || user || 0 || password). File user
// names hold no NUL (Parse refuses control characters) and the user is
// looked up in the File first, so the message splits one way only.
func (c *Cache) key(digest [32]byte, user, password []byte) cacheKey {
	mac := c.macs.Get().(hash.Hash)
	mac.Reset()
	mac.Write(digest[:])
	mac.Write(user)
	mac.Write(nul)
	mac.Write(password)
	var k cacheKey
	copy(k[:], mac.Sum(k[:0]))
	c.macs.Put(mac)
	return k
}

// has reports whether k is in the cache.
func (c *Cache) has(k cacheKey) bool {
	if c == nil {
		return false
	}
	_, ok := c.gen.Load().m.Load(k)
	return ok
}

// add inserts k, starting a fresh generation when the current one is full.
// A slot is reserved before the store, so no map ever holds more than size
// entries.
func (c *Cache) add(k cacheKey) {
	if c == nil {
		return
	}
	for {
		g := c.gen.Load()
		if g.n.Add(1) <= c.size {
			g.m.Store(k, struct{}{})
			return
		}
		c.gen.CompareAndSwap(g, new(generation))
	}
}

// len returns the number of entries in the current generation.
func (c *Cache) len() int {
	if c == nil {
		return 0
	}
	n := 0
	c.gen.Load().m.Range(func(any, any) bool { n++; return true })
	return n
}
