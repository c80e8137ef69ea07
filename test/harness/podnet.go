package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// podLink is the name of a pod's interface in its namespace.
const podLink = "eth0"

// podNetwork is a pod's own network namespace, joined by a veth pair to
// its Network's namespace, which routes between the host (HostIP), the
// backends and the pods: the pod has an address of the Network's /24, as
// if it were one more backend, but its wildcard listeners (:8080) are its
// own. The Network's namespace answers ARP for the host and the other
// pods (proxy ARP) and forwards; the host needs no route or setting, and
// nothing leaves the /24.
type podNetwork struct {
	// name is the namespace's name, ip the pod's address.
	name string
	ip   netip.Addr
	// link is the Network's side of the veth pair.
	link    string
	network *Network
}

// isPodNamespace reports whether name is the namespace of a pod of the
// Network named network.
func isPodNamespace(network, name string) bool {
	return strings.HasPrefix(name, network+"-p")
}

// attachPod creates a pod's namespace with the next address of n.
func (n *Network) attachPod() (*podNetwork, error) {
	addr, err := n.claimAddr()
	if err != nil {
		return nil, err
	}
	host := addr.As4()[3]
	p := &podNetwork{
		name:    fmt.Sprintf("%s-p%d", n.Name, host),
		ip:      addr,
		link:    fmt.Sprintf("rjp%03x%02x", n.subnet, host),
		network: n,
	}
	if err := n.routeForPods(); err != nil {
		return nil, err
	}
	if err := p.setup(); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// routeForPods makes n's namespace a router between the host and the
// pods, once: forwarding on, a route to the host's address, proxy ARP on
// its side of the host's veth pair.
func (n *Network) routeForPods() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.routing {
		return nil
	}
	if err := ip("-n", n.Name, "route", "replace", n.HostIP.String()+"/32", "dev", n.nsLink); err != nil {
		return err
	}
	err := inNamespace(n.path(), func() error {
		return sysctls(map[string]string{
			"ipv4/ip_forward": "1",
			// The pods ask for the backends' addresses on their own links.
			"ipv4/conf/all/arp_ignore": "0",
		}, proxyARP(n.nsLink))
	})
	if err != nil {
		return fmt.Errorf("making network %s route for pods: %w", n.Name, err)
	}
	n.routing = true
	return nil
}

// proxyARP returns the settings that make an interface answer ARP, at
// once, for the addresses routed through another one.
func proxyARP(link string) map[string]string {
	return map[string]string{
		"ipv4/conf/" + link + "/proxy_arp":    "1",
		"ipv4/conf/" + link + "/arp_ignore":   "0",
		"ipv4/neigh/" + link + "/proxy_delay": "0",
	}
}

// sysctls writes network settings (paths under /proc/sys/net) of the
// calling thread's network namespace.
func sysctls(settings ...map[string]string) error {
	for _, m := range settings {
		for key, value := range m {
			if err := os.WriteFile(filepath.Join("/proc/sys/net", key), []byte(value), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// setup creates the namespace and the veth pair and routes the address.
func (p *podNetwork) setup() error {
	n := p.network
	for _, args := range [][]string{
		{"netns", "add", p.name},
		{"-n", n.Name, "link", "add", p.link, "type", "veth", "peer", "name", podLink, "netns", p.name},
		{"-n", p.name, "link", "set", "lo", "up"},
		{"-n", p.name, "addr", "add", p.ip.String() + "/24", "dev", podLink},
		{"-n", p.name, "link", "set", podLink, "up"},
		{"-n", n.Name, "link", "set", p.link, "up"},
		{"-n", n.Name, "route", "add", p.ip.String() + "/32", "dev", p.link},
	} {
		if err := ip(args...); err != nil {
			return err
		}
	}
	return inNamespace(n.path(), func() error { return sysctls(proxyARP(p.link)) })
}

// path is the namespace's file.
func (p *podNetwork) path() string { return filepath.Join("/run/netns", p.name) }

// addLocal adds addr to the pod's loopback interface (for the API server's
// Service address).
func (p *podNetwork) addLocal(addr netip.Addr) error {
	return ip("-n", p.name, "addr", "add", addr.String()+"/32", "dev", "lo")
}

// close removes the namespace (and with it the veth pair).
func (p *podNetwork) close() {
	_ = ip("netns", "del", p.name)
}

// apiProxy forwards TCP connections made inside a pod's namespace to the
// API server's address on the host's loopback: the pod's in-cluster
// configuration (KUBERNETES_SERVICE_HOST and _PORT, the "kubernetes"
// Service's cluster IP and port) reaches the real API server without
// traffic leaving loopback.
type apiProxy struct {
	listener net.Listener
	target   string
	wg       sync.WaitGroup
	conns    ConnSet
}

// startAPIProxy listens on addr inside the pod's namespace and forwards to
// target (host:port on the host).
func startAPIProxy(p *podNetwork, addr netip.AddrPort, target string) (*apiProxy, error) {
	if err := p.addLocal(addr.Addr()); err != nil {
		return nil, err
	}
	l, err := listenIn(p.path(), addr)
	if err != nil {
		return nil, fmt.Errorf("the API server's address %s in the pod: %w", addr, err)
	}
	x := &apiProxy{listener: l, target: target}
	x.wg.Go(x.serve)
	return x, nil
}

func (x *apiProxy) serve() {
	for {
		c, err := x.listener.Accept()
		if err != nil {
			return
		}
		x.wg.Go(func() { x.forward(c) })
	}
}

// forward copies between the pod's connection and one to the API server.
func (x *apiProxy) forward(in net.Conn) {
	defer in.Close()
	out, err := (&net.Dialer{}).DialContext(context.Background(), "tcp", x.target)
	if err != nil {
		return
	}
	defer out.Close()
	if !x.conns.Track(in, out) {
		return
	}
	defer x.conns.Untrack(in, out)
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(out, in)
		out.Close() // ends the other copy too
		close(done)
	}()
	_, _ = io.Copy(in, out)
	in.Close()
	<-done
}

// close stops listening and closes the open connections.
func (x *apiProxy) close() {
	err := x.listener.Close()
	x.conns.CloseAll()
	if err == nil || errors.Is(err, net.ErrClosed) {
		x.wg.Wait()
	}
}
