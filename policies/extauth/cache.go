package extauth

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/exchange"
)

// cacheShards is the number of independently locked parts of a Cache.
const cacheShards = 64

// Cache remembers the service's outcomes by a key of request attributes
// (config.AuthCache.Key), for the durations configured per outcome: 2xx,
// 401, 403. A 500 (anything else, timeouts, failures) is never remembered.
//
// Entries are keyed by the SHA-256 of the key's parts, each length-prefixed,
// so that credentials in the key (an Authorization header, a session
// cookie) are not kept and two different keys cannot share an entry.
//
// A Cache is lock-striped: 64 shards, chosen by the key's first byte, each
// a map under its own RWMutex. A hit takes one shard's read lock, so
// concurrent requests contend only when they land on the same shard and
// one of them writes; a single mutex would serialise every request of the
// route. (sync.Map does not fit: entries expire and each shard's count is
// bounded.)
//
// The bound is MaxEntries in all, each shard holding its share. Inserting
// into a full shard first drops its expired entries; when none has
// expired it drops one entry at random (the first of Go's randomised map
// iteration). Memory is bounded whatever the clients send.
type Cache struct {
	shards   [cacheShards]cacheShard
	perShard int
	parts    []keyPart
	ttl      map[int]time.Duration // by outcome status
	macs     sync.Pool             // of hash.Hash (SHA-256)
	now      func() time.Time
}

type cacheShard struct {
	mu sync.RWMutex
	m  map[cacheKey]cacheEntry
}

type cacheEntry struct {
	o       *outcome
	expires time.Time
}

type cacheKey [sha256.Size]byte

// keyPart is one attribute of the key: kind is method, scheme, host, uri,
// path, client_ip, header or cookie; name is the header or cookie name.
type keyPart struct {
	kind, name string
}

// NewCache returns the cache cfg describes.
func NewCache(cfg *config.AuthCache) *Cache {
	entries := cfg.MaxEntries
	if entries == 0 {
		entries = config.DefaultAuthCacheEntries
	}
	allowed, unauthorized, forbidden := cfg.Durations()
	c := &Cache{
		perShard: max(1, (entries+cacheShards-1)/cacheShards),
		ttl:      map[int]time.Duration{http.StatusOK: allowed, http.StatusUnauthorized: unauthorized, http.StatusForbidden: forbidden},
		now:      time.Now,
	}
	c.macs.New = func() any { return sha256.New() }
	for i := range c.shards {
		c.shards[i].m = map[cacheKey]cacheEntry{}
	}
	for _, p := range cfg.Key {
		kind, name, _ := strings.Cut(p, ":")
		if kind == "header" {
			name = http.CanonicalHeaderKey(name)
		}
		c.parts = append(c.parts, keyPart{kind: kind, name: name})
	}
	return c
}

// key returns the entry key of x.
func (c *Cache) key(x *exchange.Request) cacheKey {
	h := c.macs.Get().(hash.Hash)
	h.Reset()
	for _, p := range c.parts {
		switch p.kind {
		case "header":
			values := x.HTTP.Header[p.name]
			var n [4]byte
			binary.BigEndian.PutUint32(n[:], uint32(len(values)))
			h.Write(n[:])
			for _, v := range values {
				writePart(h, []byte(v))
			}
		default:
			writePart(h, []byte(c.value(p, x)))
		}
	}
	var k cacheKey
	h.Sum(k[:0])
	c.macs.Put(h)
	return k
}

// value is a part's value in x, other than a header's.
func (c *Cache) value(p keyPart, x *exchange.Request) string {
	switch p.kind {
	case "method":
		return x.HTTP.Method
	case "scheme":
		return x.Scheme
	case "host":
		return x.HTTP.Host
	case "uri":
		return requestURI(x.HTTP)
	case "path":
		return x.Path
	case "client_ip":
		return x.ClientIP.String()
	case "cookie":
		if v, ok := exchange.CookieValue(x.HTTP.Header, p.name); ok {
			return "=" + v // set, even to "", differs from absent
		}
	}
	return ""
}

func writePart(h hash.Hash, p []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(p)))
	h.Write(n[:])
	h.Write(p)
}

func (c *Cache) shard(k cacheKey) *cacheShard { return &c.shards[int(k[0])%cacheShards] }

// get returns the outcome remembered for k, if it has not expired.
func (c *Cache) get(k cacheKey) (*outcome, bool) {
	s := c.shard(k)
	s.mu.RLock()
	e, ok := s.m[k]
	s.mu.RUnlock()
	if !ok || !c.now().Before(e.expires) {
		return nil, false
	}
	return e.o, true
}

// put remembers o for k for its outcome's duration; a duration of 0
// remembers nothing.
func (c *Cache) put(k cacheKey, o *outcome) {
	ttl := c.ttl[o.status]
	if ttl <= 0 {
		return
	}
	now := c.now()
	s := c.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[k]; !ok && len(s.m) >= c.perShard {
		s.evict(now, c.perShard)
	}
	s.m[k] = cacheEntry{o: o, expires: now.Add(ttl)}
}

// evict drops the expired entries of a full shard, or one at random when
// none has expired.
func (s *cacheShard) evict(now time.Time, limit int) {
	for k, e := range s.m {
		if !now.Before(e.expires) {
			delete(s.m, k)
		}
	}
	if len(s.m) < limit {
		return
	}
	for k := range s.m {
		delete(s.m, k)
		return
	}
}

// Len returns the number of entries, expired ones included.
func (c *Cache) Len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		n += len(s.m)
		s.mu.RUnlock()
	}
	return n
}
