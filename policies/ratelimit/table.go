package ratelimit

import (
	"crypto/rand"
	"encoding/binary"
	"math/bits"
	"net/netip"
	"sync/atomic"
)

// A table is a fixed array of buckets of ways words: each word is one
// client's entry, its tag in the top tagBits and its value (a time or a
// count) in the low valueBits. Every change is one compare-and-swap of one
// word, so no lock is ever taken and a reader never sees half an entry.
const (
	ways      = 8 // 8 words: one 64-byte cache line per bucket
	tagBits   = 22
	valueBits = 64 - tagBits
	valueMask = 1<<valueBits - 1
)

// bucket is one cache line of entries.
type bucket [ways]atomic.Uint64

// table is the storage the two kinds of limits share: the buckets and the
// keys of the hash that places a client in them.
type table struct {
	buckets []bucket
	mask    uint64
	k0, k1  uint64
}

// newTable makes a table of at least clients entries (whole buckets, a
// power of two of them).
func newTable(clients int) *table {
	n := 1
	for n*ways < clients {
		n <<= 1
	}
	var seed [16]byte
	rand.Read(seed[:])
	return &table{
		buckets: make([]bucket, n),
		mask:    uint64(n - 1),
		k0:      binary.LittleEndian.Uint64(seed[:8]) | 1,
		k1:      binary.LittleEndian.Uint64(seed[8:]) | 1,
	}
}

// place returns the bucket of a client and its tag (never 0, which marks
// an empty word). The hash is keyed by the table's random seed, so which
// clients share a bucket cannot be chosen from outside.
func (t *table) place(a netip.Addr) (*bucket, uint64) {
	b := a.Unmap().As16()
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	h := mix(hi^t.k0, lo^t.k1)
	h = mix(h^t.k1, 0x9e3779b97f4a7c15)
	tag := h >> valueBits
	if tag == 0 {
		tag = 1
	}
	return &t.buckets[h&t.mask], tag << valueBits
}

// mix folds the 128-bit product of a and b (wyhash's mum).
func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// requests is the table of one request rate: each entry holds its client's
// theoretical arrival time (GCRA's TAT: when the client's bucket will be
// empty) in units of interval/64, modulo 2^valueBits.
type requests struct {
	*table
	// perUnit converts nanoseconds to units.
	perUnit float64
}

// step is what one request adds to a TAT: the interval, in units.
const step = 64

// newRequests makes the table of a rate of one request per interval
// nanoseconds.
func newRequests(clients int, interval int64) *requests {
	return &requests{table: newTable(clients), perUnit: step / float64(interval)}
}

// units converts a monotonic time in nanoseconds to the table's units.
func (r *requests) units(now int64) uint64 { return uint64(float64(now)*r.perUnit) & valueMask }

// ahead is how far an entry's TAT is ahead of now, in units, or -1 when it
// is not: the client's bucket is empty. A TAT more than horizon ahead
// cannot have been written by an accepted request (none ever sets it
// further than burst+1 steps ahead), so it is a time from before the
// units wrapped around: stale, that is empty too.
func ahead(word, now, horizon uint64) int64 {
	d := (word - now) & valueMask
	if d > horizon {
		return -1
	}
	return int64(d)
}

// take admits a request of the client at now (in units) when its bucket
// holds at most burst steps, and reports whether it did. A refused request
// changes nothing, as in nginx. Entries are found by tag; a new client
// takes an empty word of its bucket, or else the word whose TAT is lowest
// (the client that would be let through soonest anyway: the least
// recently limited).
func (r *requests) take(b *bucket, tag, now uint64, burst uint64) bool {
	tolerance := burst * step
	horizon := tolerance + step
	for {
		victim, victimAhead := -1, int64(1<<62)
		var victimWord uint64
		for i := range b {
			w := b[i].Load()
			if w&^valueMask == tag {
				base, d := w&valueMask, ahead(w&valueMask, now, horizon)
				if d < 0 {
					base = now
				} else if uint64(d) > tolerance {
					return false
				}
				if b[i].CompareAndSwap(w, tag|(base+step)&valueMask) {
					return true
				}
				victim = -2 // changed under us: look again
				break
			}
			d := int64(-2) // an empty word is the best victim
			if w != 0 {
				d = ahead(w&valueMask, now, horizon)
			}
			if d < victimAhead {
				victim, victimAhead, victimWord = i, d, w
			}
		}
		if victim >= 0 && b[victim].CompareAndSwap(victimWord, tag|(now+step)&valueMask) {
			return true
		}
	}
}

// give undoes one take of the client (a request another limit refused),
// so that the request counts in no limit, as in nginx.
func (r *requests) give(b *bucket, tag uint64) {
	for i := range b {
		for {
			w := b[i].Load()
			if w&^valueMask != tag {
				break
			}
			if b[i].CompareAndSwap(w, tag|((w&valueMask)-step)&valueMask) {
				return
			}
		}
	}
}

// conns is the table of requests in flight: each entry holds its client's
// count. An entry with requests in flight is never taken by another
// client, and a count that falls to zero frees its word.
type conns struct{ *table }

// acquire counts one more request of the client when it has fewer than
// limit in flight, and returns the word that holds the count; nil when the
// request is refused: the client is at its limit, or every word of its
// bucket holds another client in flight (nginx refuses too when its zone
// is full).
func (c *conns) acquire(b *bucket, tag, limit uint64) *atomic.Uint64 {
	for {
		free := -1
		found := false
		for i := range b {
			w := b[i].Load()
			if w&^valueMask == tag {
				found = true
				if w&valueMask >= limit {
					return nil
				}
				if b[i].CompareAndSwap(w, w+1) {
					return &b[i]
				}
				break
			}
			if w == 0 && free < 0 {
				free = i
			}
		}
		switch {
		case found:
		case free < 0:
			return nil
		case b[free].CompareAndSwap(0, tag|1):
			return &b[free]
		}
	}
}

// release counts one request less in the word acquire returned.
func release(word *atomic.Uint64) {
	for {
		w := word.Load()
		next := w - 1
		if next&valueMask == 0 {
			next = 0
		}
		if word.CompareAndSwap(w, next) {
			return
		}
	}
}
