package daemon

import (
	"maps"
	"sync"
)

// boundAddresses are the addresses the listeners are bound to, by name
// ("health" for the health listener): set as Start binds them, read by the
// admin API and by self subrequests of external authentication while
// requests are served.
type boundAddresses struct {
	mu    sync.RWMutex
	addrs map[string]string
}

func (b *boundAddresses) set(name, addr string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.addrs == nil {
		b.addrs = map[string]string{}
	}
	b.addrs[name] = addr
}

// remove forgets the address of a listener that is gone.
func (b *boundAddresses) remove(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.addrs, name)
}

// get is the address of the listener name, "" before it is bound.
func (b *boundAddresses) get(name string) string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.addrs[name]
}

// all is a copy of every address.
func (b *boundAddresses) all() map[string]string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return maps.Clone(b.addrs)
}
