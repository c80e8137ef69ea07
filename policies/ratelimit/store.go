package ratelimit

import (
	"sync"
	"time"
)

// Store holds the tables of the zones across configuration loads: a load
// asks it for the tables of its zones (Begin, then New with the Use), and,
// once the load serves, Keep drops the tables it no longer uses. A table
// is found again by its zone's name and what its entries mean (the rate of
// a request table, since its times are in units of that rate; the size),
// so a reload that keeps those keeps every client's counts.
type Store struct {
	// epoch is the origin of the tables' times, monotonic.
	epoch  time.Time
	mu     sync.Mutex
	tables map[tableKey]any
}

// tableKey is a table's identity.
type tableKey struct {
	zone     string
	kind     byte  // 's' requests, 'c' requests in flight
	interval int64 // nanoseconds per request, for 's'
	clients  int
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{epoch: time.Now(), tables: map[tableKey]any{}}
}

// Use is the set of tables one configuration load uses.
type Use struct {
	store *Store
	keys  map[tableKey]bool
}

// Begin starts the use of one configuration load.
func (s *Store) Begin() *Use { return &Use{store: s, keys: map[tableKey]bool{}} }

// Keep drops the tables u does not use: those of zones the serving
// configuration lacks. Requests still running on the previous one finish
// with the tables they hold.
func (s *Store) Keep(u *Use) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.tables {
		if !u.keys[k] {
			delete(s.tables, k)
		}
	}
}

// Len is the number of tables held.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tables)
}

func (u *Use) requests(zone string, interval int64, clients int) *requests {
	k := tableKey{zone: zone, kind: 's', interval: interval, clients: clients}
	return use(u, k, func() *requests { return newRequests(clients, interval) })
}

func (u *Use) conns(zone string, clients int) *conns {
	k := tableKey{zone: zone, kind: 'c', clients: clients}
	return use(u, k, func() *conns { return &conns{newTable(clients)} })
}

// use returns the table of k, made by make when the store lacks it.
func use[T any](u *Use, k tableKey, make func() T) T {
	s := u.store
	s.mu.Lock()
	defer s.mu.Unlock()
	u.keys[k] = true
	if t, ok := s.tables[k].(T); ok {
		return t
	}
	t := make()
	s.tables[k] = t
	return t
}
