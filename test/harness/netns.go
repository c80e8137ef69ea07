package harness

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Ports the backends listen on (each backend has its own address, so all
// of a Service's endpoints share the port, as an EndpointSlice requires).
const (
	BackendPort    = 8080
	TLSBackendPort = 8443
)

// benchmarkSubnets counts the /24s of 198.18.0.0/15 (RFC 2544, for network
// benchmarks): every Network takes one of them.
const benchmarkSubnets = 512

// lockDir holds a lock file for each /24 a Network has used (the files stay:
// removing one would race with a process opening it). A flock ends with its
// process, so a /24 whose lock is free belongs to nobody alive.
const lockDir = "/run/ramjet-harness"

// Network is a network namespace joined to the host by a veth pair, with
// a /24 of 198.18.0.0/15: the host side has .1, each backend (and each pod
// of RunPod, in a namespace of its own) one more address from .2 up. Traffic from the host (the test process, ramjetd)
// reaches the backends directly; nothing is routed elsewhere.
type Network struct {
	// Name is the namespace's name (`ip netns exec NAME ...`).
	Name string
	// Prefix is the /24 of the network.
	Prefix netip.Prefix
	// HostIP is the host side's address (the source of the host's
	// connections to the backends).
	HostIP netip.Addr

	hostLink, nsLink string
	subnet           int // the index of the /24 in 198.18.0.0/15
	lock             *os.File

	mu   sync.Mutex
	next int // host number of the next address
	// taken are the host numbers handed out (by either allocator);
	// reserved are those the sequential allocator skips (see Reserve).
	taken, reserved map[int]bool
	backends        []*Backend
	routing         bool // the namespace routes for pods (see attachPod)
	closed          bool
}

// NewNetwork creates a Network that is removed when t ends. It fails t
// when the harness is not root or `ip` (iproute2) is missing: end-to-end
// tests need both and must not silently skip.
func NewNetwork(t testing.TB) *Network {
	t.Helper()
	n, err := CreateNetwork()
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("harness: %v", err)
		}
	})
	return n
}

// CreateNetwork is NewNetwork for a caller without a testing.TB; the caller
// must call Close. It picks a free /24 at random (parallel tests and test
// binaries never share one), after removing the networks that killed test
// binaries left behind.
func CreateNetwork() (*Network, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("network namespaces need root: run the end-to-end tests as root (CI does)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, errors.New("network namespaces need the ip command: apt-get install iproute2")
	}
	if err := os.MkdirAll(lockDir, 0o755); err != nil {
		return nil, err
	}
	reap()
	for _, i := range rand.Perm(benchmarkSubnets) {
		lock, err := lockSubnet(i)
		if err != nil {
			return nil, err
		}
		if lock == nil {
			continue // a live harness's
		}
		n := newNetwork(i, lock)
		n.teardown() // what a killed test binary left in this /24
		if hostUses(n.Prefix) {
			lock.Close()
			continue
		}
		if err := n.setup(); err != nil {
			n.teardown()
			lock.Close()
			return nil, err
		}
		return n, nil
	}
	return nil, errors.New("no free /24 in 198.18.0.0/15")
}

// newNetwork describes the network of the i-th /24, whose lock is held.
func newNetwork(i int, lock *os.File) *Network {
	b, c := byte(18+i/256), byte(i%256)
	return &Network{
		Name:     fmt.Sprintf("ramjet-%d-%d", b, c),
		Prefix:   netip.PrefixFrom(netip.AddrFrom4([4]byte{198, b, c, 0}), 24),
		HostIP:   netip.AddrFrom4([4]byte{198, b, c, 1}),
		hostLink: fmt.Sprintf("rjh%03x", i),
		nsLink:   fmt.Sprintf("rjn%03x", i),
		subnet:   i,
		lock:     lock,
		next:     2,
		taken:    map[int]bool{},
		reserved: map[int]bool{},
	}
}

// lockSubnet takes the lock of the i-th /24, or returns nil when a live
// process holds it.
func lockSubnet(i int) (*os.File, error) {
	name := fmt.Sprintf("198.%d.%d.0.lock", 18+i/256, i%256)
	lock, err := os.OpenFile(filepath.Join(lockDir, name), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, fmt.Errorf("locking %s: %w", lock.Name(), err)
	}
	return lock, nil
}

// reap removes the networks whose lock nobody holds: those of test
// binaries that ended without Close (killed, or timed out).
func reap() {
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		var b, c int
		if _, err := fmt.Sscanf(e.Name(), "ramjet-%d-%d", &b, &c); err != nil || b < 18 || b > 19 || c < 0 || c > 255 {
			continue
		}
		i := (b-18)*256 + c
		lock, err := lockSubnet(i)
		if err != nil || lock == nil {
			continue
		}
		if n := newNetwork(i, lock); n.Name == e.Name() || isPodNamespace(n.Name, e.Name()) {
			n.teardown()
		}
		lock.Close()
	}
}

// hostUses reports whether an address of the host's interfaces overlaps p.
func hostUses(p netip.Prefix) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true
	}
	for _, a := range addrs {
		if q, err := netip.ParsePrefix(a.String()); err == nil && q.Overlaps(p) {
			return true
		}
	}
	return false
}

func (n *Network) setup() error {
	host := n.HostIP.String() + "/24"
	for _, args := range [][]string{
		{"netns", "add", n.Name},
		{"link", "add", n.hostLink, "type", "veth", "peer", "name", n.nsLink, "netns", n.Name},
		{"addr", "add", host, "dev", n.hostLink},
		{"link", "set", n.hostLink, "up"},
		{"-n", n.Name, "link", "set", "lo", "up"},
		{"-n", n.Name, "link", "set", n.nsLink, "up"},
	} {
		if err := ip(args...); err != nil {
			return err
		}
	}
	return nil
}

// teardown removes the pods' namespaces, the veth pair and the
// namespace, ignoring what is not there.
func (n *Network) teardown() {
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		if isPodNamespace(n.Name, e.Name()) {
			_ = ip("netns", "del", e.Name())
		}
	}
	_ = ip("link", "del", n.hostLink) // also removes the peer
	_ = ip("netns", "del", n.Name)    // and the pods' veth pairs
}

// Close stops the backends and removes the namespace and the veth pair.
func (n *Network) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	backends := n.backends
	n.mu.Unlock()
	for _, b := range backends {
		b.Close()
	}
	n.teardown()
	defer n.lock.Close()
	if _, err := os.Stat(filepath.Join("/run/netns", n.Name)); err == nil {
		return fmt.Errorf("network namespace %s could not be removed", n.Name)
	}
	return nil
}

// AddAddr adds the next free address of the /24 to the namespace's side of
// the veth pair and returns it.
func (n *Network) AddAddr() (netip.Addr, error) {
	addr, err := n.claimAddr()
	if err != nil {
		return netip.Addr{}, err
	}
	if err := ip("-n", n.Name, "addr", "add", addr.String()+"/24", "dev", n.nsLink); err != nil {
		return netip.Addr{}, err
	}
	return addr, nil
}

// AddAddrOf adds addr, which must be a free address of the /24 (from .2
// to .254, not handed out by AddAddr or to a pod), to the namespace's side
// of the veth pair: the way to ask for a given address. A reserved
// address may be asked for this way.
func (n *Network) AddAddrOf(addr netip.Addr) error {
	host, err := n.claimAddrOf(addr)
	if err != nil {
		return err
	}
	if err := ip("-n", n.Name, "addr", "add", addr.String()+"/24", "dev", n.nsLink); err != nil {
		n.freeHost(host)
		return err
	}
	return nil
}

// RemoveAddr removes an address AddAddrOf added, so that it is free to be
// asked for again.
func (n *Network) RemoveAddr(addr netip.Addr) error {
	host, ok := n.hostOf(addr)
	if !ok {
		return fmt.Errorf("%s is not an address of network %s", addr, n.Name)
	}
	err := ip("-n", n.Name, "addr", "del", addr.String()+"/24", "dev", n.nsLink)
	n.freeHost(host)
	return err
}

// Reserve keeps a free address of the /24 from AddAddr and the pods, so
// that a test can ask for it with AddAddrOf.
func (n *Network) Reserve(addr netip.Addr) error {
	host, ok := n.hostOf(addr)
	n.mu.Lock()
	defer n.mu.Unlock()
	if !ok || n.taken[host] {
		return fmt.Errorf("%s is not a free address of network %s", addr, n.Name)
	}
	n.reserved[host] = true
	return nil
}

// claimAddr takes the next free address of the /24 that is not reserved,
// for a backend or a pod.
func (n *Network) claimAddr() (netip.Addr, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return netip.Addr{}, errors.New("network " + n.Name + " is closed")
	}
	for n.next <= 254 && (n.taken[n.next] || n.reserved[n.next]) {
		n.next++
	}
	if n.next > 254 {
		return netip.Addr{}, errors.New("network " + n.Name + " has no address left")
	}
	n.taken[n.next] = true
	a4 := n.Prefix.Addr().As4()
	a4[3] = byte(n.next)
	n.next++
	return netip.AddrFrom4(a4), nil
}

// claimAddrOf takes addr, a free address of the /24, and returns its host
// number.
func (n *Network) claimAddrOf(addr netip.Addr) (int, error) {
	host, ok := n.hostOf(addr)
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case n.closed:
		return 0, errors.New("network " + n.Name + " is closed")
	case !ok:
		return 0, fmt.Errorf("%s is not an address of network %s", addr, n.Name)
	case n.taken[host]:
		return 0, fmt.Errorf("%s is taken", addr)
	}
	n.taken[host] = true
	return host, nil
}

// freeHost makes a host number free for AddAddrOf again (the sequential
// allocator never goes back).
func (n *Network) freeHost(host int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.taken, host)
}

// hostOf is the host number of addr when it may be handed out: an
// address of the /24 from .2 to .254.
func (n *Network) hostOf(addr netip.Addr) (int, bool) {
	if !addr.Is4() || !n.Prefix.Contains(addr) {
		return 0, false
	}
	host := int(addr.As4()[3])
	return host, host >= 2 && host <= 254
}

// Listen opens a TCP listener on addr inside the namespace (addr must be
// one of AddAddr's, or port 0 of any). The socket keeps the namespace it
// was created in, so it may be used from any goroutine.
func (n *Network) Listen(addr netip.AddrPort) (net.Listener, error) {
	return listenIn(n.path(), addr)
}

// path is the namespace's file.
func (n *Network) path() string { return filepath.Join("/run/netns", n.Name) }

// listenIn opens a TCP listener on addr inside the network namespace at
// nsPath.
func listenIn(nsPath string, addr netip.AddrPort) (net.Listener, error) {
	var l net.Listener
	err := inNamespace(nsPath, func() (err error) {
		l, err = net.Listen("tcp", addr.String())
		return err
	})
	if err != nil && l != nil {
		l.Close()
		return nil, err
	}
	return l, err
}

// inNamespace runs fn on a thread inside the network namespace at nsPath,
// then moves the thread back to the host's namespace.
func inNamespace(nsPath string, fn func() error) error {
	done := make(chan error, 1)
	// A goroutine of its own: if the thread cannot get back to the host's
	// namespace it stays locked, and Go ends it with the goroutine.
	go func() {
		runtime.LockOSThread()
		host, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			done <- err
			return
		}
		defer host.Close()
		target, err := os.Open(nsPath)
		if err != nil {
			runtime.UnlockOSThread()
			done <- err
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("entering network namespace %s: %w", nsPath, err)
			return
		}
		err = fn()
		if back := unix.Setns(int(host.Fd()), unix.CLONE_NEWNET); back != nil {
			done <- errors.Join(err, fmt.Errorf("leaving network namespace %s: %w", nsPath, back))
			return // still locked: the thread ends with this goroutine
		}
		runtime.UnlockOSThread()
		done <- err
	}()
	return <-done
}

// Backend is an HTTP server in a Network.
type Backend struct {
	// Name is the name given to Backend; the default handler answers it.
	Name string
	// IP is the backend's own address in the Network's /24.
	IP string
	// Port is BackendPort, or TLSBackendPort for a TLS backend.
	Port int32
	// Addr is IP:Port and URL http://IP:Port/ (https for TLS).
	Addr, URL string

	srv  *http.Server
	once sync.Once
}

// Backend starts an HTTP server on a new address of n, port BackendPort,
// serving handler; a nil handler answers every request with 200, the
// header X-Backend: name and the body "name\n". It stops when t ends (or
// with Close); its address stays, so connections to it are refused.
func (n *Network) Backend(t testing.TB, name string, handler http.Handler) *Backend {
	t.Helper()
	return n.backend(t, name, handler, nil)
}

// TLSBackend is Backend serving TLS with config (which holds the
// certificate) on port TLSBackendPort.
func (n *Network) TLSBackend(t testing.TB, name string, handler http.Handler, config *tls.Config) *Backend {
	t.Helper()
	if config == nil {
		t.Fatal("harness: TLSBackend needs a tls.Config with a certificate")
	}
	return n.backend(t, name, handler, config)
}

func (n *Network) backend(t testing.TB, name string, handler http.Handler, config *tls.Config) *Backend {
	t.Helper()
	b, err := n.Serve(name, handler, config)
	if err != nil {
		t.Fatalf("harness: backend %s: %v", name, err)
	}
	t.Cleanup(b.Close)
	return b
}

// Serve is Backend (config nil) or TLSBackend for a caller without a
// testing.TB; Network.Close stops it.
func (n *Network) Serve(name string, handler http.Handler, config *tls.Config) (*Backend, error) {
	if handler == nil {
		handler = nameHandler(name)
	}
	addr, err := n.AddAddr()
	if err != nil {
		return nil, err
	}
	port, scheme := BackendPort, "http"
	if config != nil {
		port, scheme = TLSBackendPort, "https"
	}
	l, err := n.Listen(netip.AddrPortFrom(addr, uint16(port)))
	if err != nil {
		return nil, err
	}
	if config != nil {
		l = tls.NewListener(l, config)
	}
	hostPort := net.JoinHostPort(addr.String(), strconv.Itoa(port))
	b := &Backend{
		Name: name, IP: addr.String(), Port: int32(port), Addr: hostPort,
		URL: scheme + "://" + hostPort + "/",
		srv: &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second},
	}
	n.mu.Lock()
	n.backends = append(n.backends, b)
	n.mu.Unlock()
	go func() { _ = b.srv.Serve(l) }()
	return b, nil
}

// Close stops the server and closes its connections.
func (b *Backend) Close() {
	b.once.Do(func() { _ = b.srv.Close() })
}

// nameHandler answers every request with the backend's name.
func nameHandler(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Backend", name)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte(name + "\n"))
	})
}

// ip runs the ip command; the error carries its output.
func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}
