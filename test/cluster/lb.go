//go:build conformance

package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// dialTimeout bounds a load balancer's connection to an endpoint.
const dialTimeout = 5 * time.Second

// loadBalancer plays a cloud's load balancer controller for the Services
// of type LoadBalancer without a loadBalancerClass: each gets an address
// of the Network, written to status.loadBalancer.ingress, where it listens
// on every TCP port of the Service and forwards each connection to a
// ready endpoint of that port (round robin), as EndpointSlices list them.
type loadBalancer struct {
	client   kubernetes.Interface
	net      *harness.Network
	services corelisters.ServiceLister
	slices   discoverylisters.EndpointSliceLister
	queue    workqueue.TypedInterface[cache.ObjectName]
	quit     chan struct{}
	done     chan struct{}

	mu       sync.Mutex // guards balanced
	balanced map[cache.ObjectName]*balancedService
}

// balancedService is the address of one Service and its listeners, by
// port number.
type balancedService struct {
	addr netip.Addr
	// requested: addr is the Service's spec.loadBalancerIP, freed when the
	// Service lets it go (the others stay taken).
	requested bool
	listeners map[int32]*lbListener
}

// close closes the listeners and frees a requested address.
func (b *balancedService) close(n *harness.Network) {
	for _, l := range b.listeners {
		l.close()
	}
	if b.requested {
		_ = n.RemoveAddr(b.addr)
	}
}

// lbListener forwards the connections of one port.
type lbListener struct {
	listener net.Listener
	wg       sync.WaitGroup
	next     atomic.Uint64 // round robin
	conns    harness.ConnSet
}

// startLoadBalancer watches Services and EndpointSlices until stop.
func startLoadBalancer(client kubernetes.Interface, n *harness.Network) *loadBalancer {
	factory := informers.NewSharedInformerFactory(client, 0)
	lb := &loadBalancer{
		client: client, net: n,
		services: factory.Core().V1().Services().Lister(),
		slices:   factory.Discovery().V1().EndpointSlices().Lister(),
		queue:    workqueue.NewTyped[cache.ObjectName](),
		quit:     make(chan struct{}), done: make(chan struct{}),
		balanced: map[cache.ObjectName]*balancedService{},
	}
	enqueue := func(obj any) {
		if name, err := cache.DeletionHandlingObjectToName(obj); err == nil {
			lb.queue.Add(name)
		}
	}
	_, _ = factory.Core().V1().Services().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
	})
	// The endpoints are read when a connection comes: only the informer's
	// cache is needed.
	_ = factory.Discovery().V1().EndpointSlices().Informer()
	factory.Start(lb.quit)
	go lb.work()
	return lb
}

// work syncs the queued Services until stop.
func (lb *loadBalancer) work() {
	defer close(lb.done)
	for {
		name, quit := lb.queue.Get()
		if quit {
			return
		}
		lb.sync(name)
		lb.queue.Done(name)
	}
}

// sync makes the load balancer of a Service match it: an address and a
// listener per TCP port while it is of type LoadBalancer, nothing
// otherwise.
func (lb *loadBalancer) sync(name cache.ObjectName) {
	svc, err := lb.services.Services(name.Namespace).Get(name.Name)
	if err != nil || svc.Spec.Type != corev1.ServiceTypeLoadBalancer || svc.Spec.LoadBalancerClass != nil {
		lb.release(name)
		return
	}
	b, err := lb.ensure(name, svc)
	if errors.Is(err, errNotAvailable) {
		// As a cloud's: the Service waits without an address.
		lb.release(name)
		_ = lb.writeStatus(svc, netip.Addr{})
		return
	}
	if err != nil {
		// Retried at the Service's next change; the test sees no address.
		return
	}
	_ = lb.writeStatus(svc, b.addr)
}

// errNotAvailable is why a Service whose spec.loadBalancerIP is not a free
// address of the Network has no address.
var errNotAvailable = errors.New("the requested loadBalancerIP is not available")

// address gives the Service the address it asks for in
// spec.loadBalancerIP (when it is a free address of the Network), moving
// it there from the one it had; or keeps the address it has; or takes the
// next free one.
func (lb *loadBalancer) address(name cache.ObjectName, svc *corev1.Service) (*balancedService, error) {
	b := lb.balanced[name]
	if svc.Spec.LoadBalancerIP == "" {
		if b != nil {
			return b, nil
		}
		addr, err := lb.net.AddAddr()
		if err != nil {
			return nil, err
		}
		b = &balancedService{addr: addr, listeners: map[int32]*lbListener{}}
		lb.balanced[name] = b
		return b, nil
	}
	want, err := netip.ParseAddr(svc.Spec.LoadBalancerIP)
	if err != nil {
		return nil, errNotAvailable
	}
	if b != nil && b.addr == want {
		return b, nil
	}
	if err := lb.net.AddAddrOf(want); err != nil {
		return nil, fmt.Errorf("%w: %w", errNotAvailable, err)
	}
	if b != nil {
		b.close(lb.net)
	}
	b = &balancedService{addr: want, requested: true, listeners: map[int32]*lbListener{}}
	lb.balanced[name] = b
	return b, nil
}

// ensure gives the Service its address and its ports' listeners.
func (lb *loadBalancer) ensure(name cache.ObjectName, svc *corev1.Service) (*balancedService, error) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	b, err := lb.address(name, svc)
	if err != nil {
		return nil, err
	}
	want := map[int32]bool{}
	for _, p := range svc.Spec.Ports {
		if p.Protocol != corev1.ProtocolTCP && p.Protocol != "" {
			continue
		}
		want[p.Port] = true
		if b.listeners[p.Port] != nil {
			continue
		}
		l, err := lb.net.Listen(netip.AddrPortFrom(b.addr, uint16(p.Port)))
		if err != nil {
			return nil, fmt.Errorf("listening on %s port %d: %w", b.addr, p.Port, err)
		}
		ll := &lbListener{listener: l}
		b.listeners[p.Port] = ll
		ll.wg.Go(func() { ll.serve(lb, name, p.Port) })
	}
	for port, l := range b.listeners {
		if !want[port] {
			l.close()
			delete(b.listeners, port)
		}
	}
	return b, nil
}

// writeStatus writes the address (none when invalid) to the Service's
// status unless it is there.
func (lb *loadBalancer) writeStatus(svc *corev1.Service, addr netip.Addr) error {
	var ingress []corev1.LoadBalancerIngress
	if addr.IsValid() {
		ingress = []corev1.LoadBalancerIngress{{IP: addr.String(), IPMode: new(corev1.LoadBalancerIPModeVIP)}}
	}
	if slices.EqualFunc(svc.Status.LoadBalancer.Ingress, ingress, func(a, b corev1.LoadBalancerIngress) bool { return a.IP == b.IP }) {
		return nil
	}
	svc = svc.DeepCopy()
	svc.Status.LoadBalancer.Ingress = ingress
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	_, err := lb.client.CoreV1().Services(svc.Namespace).UpdateStatus(ctx, svc, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		lb.queue.Add(cache.ObjectName{Namespace: svc.Namespace, Name: svc.Name})
	}
	return err
}

// release closes a Service's listeners (its address stays taken unless it
// was requested).
func (lb *loadBalancer) release(name cache.ObjectName) {
	lb.mu.Lock()
	b := lb.balanced[name]
	delete(lb.balanced, name)
	lb.mu.Unlock()
	if b != nil {
		b.close(lb.net)
	}
}

// endpoints returns the ready endpoints of the Service's port.
func (lb *loadBalancer) endpoints(name cache.ObjectName, port int32) []string {
	svc, err := lb.services.Services(name.Namespace).Get(name.Name)
	if err != nil {
		return nil
	}
	var portName string
	for _, p := range svc.Spec.Ports {
		if p.Port == port {
			portName = p.Name
		}
	}
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: name.Name})
	list, err := lb.slices.EndpointSlices(name.Namespace).List(sel)
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range list {
		target := slicePort(s, portName)
		if target == 0 {
			continue
		}
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			for _, a := range e.Addresses {
				out = append(out, net.JoinHostPort(a, strconv.Itoa(int(target))))
			}
		}
	}
	slices.Sort(out)
	return out
}

// slicePort is the number of the slice's TCP port named name, 0 if none.
func slicePort(s *discoveryv1.EndpointSlice, name string) int32 {
	for _, p := range s.Ports {
		if p.Name != nil && *p.Name == name && p.Port != nil && (p.Protocol == nil || *p.Protocol == corev1.ProtocolTCP) {
			return *p.Port
		}
	}
	return 0
}

// stop stops watching and closes every listener.
func (lb *loadBalancer) stop() {
	close(lb.quit)
	lb.queue.ShutDown()
	<-lb.done
	lb.mu.Lock()
	names := make([]cache.ObjectName, 0, len(lb.balanced))
	for name := range lb.balanced {
		names = append(names, name)
	}
	lb.mu.Unlock()
	for _, name := range names {
		lb.release(name)
	}
}

// serve accepts connections until close and forwards each.
func (l *lbListener) serve(lb *loadBalancer, name cache.ObjectName, port int32) {
	for {
		c, err := l.listener.Accept()
		if err != nil {
			return
		}
		l.wg.Go(func() { l.forward(c, lb.endpoints(name, port)) })
	}
}

// forward copies between the client's connection and one to the next
// endpoint that accepts, closing the client's when none does.
func (l *lbListener) forward(in net.Conn, endpoints []string) {
	defer in.Close()
	var out net.Conn
	start := l.next.Add(1)
	for i := range endpoints {
		c, err := net.DialTimeout("tcp", endpoints[(int(start)+i)%len(endpoints)], dialTimeout)
		if err == nil {
			out = c
			break
		}
	}
	if out == nil {
		return
	}
	defer out.Close()
	if !l.conns.Track(in, out) {
		return
	}
	defer l.conns.Untrack(in, out)
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(out, in)
		if tc, ok := out.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		close(done)
	}()
	_, _ = io.Copy(in, out)
	if tc, ok := in.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	<-done
}

// close stops listening, closes the open connections and waits for the
// forwarding to end.
func (l *lbListener) close() {
	_ = l.listener.Close()
	l.conns.CloseAll()
	l.wg.Wait()
}
