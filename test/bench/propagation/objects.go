package main

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ramjet-dev/ramjet/test/harness"
)

const (
	className = "ramjet" // the controller's default --ingress-class
	updName   = "upd"
	updHost   = "upd" + domain
	rollName  = "roll"
	// rollFirst is the host number of the rolled Service's first address
	// in the network's /24: its two sets of addresses are rollFirst.. and
	// rollFirst+75.. (the backends take the first addresses). Nothing
	// listens on them: the rollout is watched in ramjetd's admin API.
	rollFirst = 100
)

func ingressClass() *networkingv1.IngressClass {
	return &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: className},
		Spec:       networkingv1.IngressClassSpec{Controller: "ramjet.dev/ingress"},
	}
}

// ingress returns an Ingress with one rule: host, path / (Prefix) to
// port 80 of service.
func ingress(name, host, service string) *networkingv1.Ingress {
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: networkingv1.IngressSpec{
			IngressClassName: new(className),
			Rules: []networkingv1.IngressRule{{
				Host: host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{
						Path:     "/",
						PathType: new(networkingv1.PathTypePrefix),
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
							Name: service, Port: networkingv1.ServiceBackendPort{Number: 80},
						}},
					}},
				}},
			}},
		},
	}
}

// routeName and routeHost name the i-th loaded route, served by the
// backend of Service i % services.
func routeName(i int) string { return fmt.Sprintf("r%d", i) }
func routeHost(i int) string { return routeName(i) + domain }

// createIngress creates an Ingress, retrying when the API server is busy.
func (b *bench) createIngress(ctx context.Context, ing *networkingv1.Ingress) error {
	return retry(ctx, func() error {
		_, err := b.client.NetworkingV1().Ingresses(namespace).Create(ctx, ing, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
}

// deleteIngresses deletes Ingresses concurrently.
func (b *bench) deleteIngresses(ctx context.Context, names []string) error {
	return b.parallel(ctx, len(names), func(i int) error {
		return retry(ctx, func() error {
			err := b.client.NetworkingV1().Ingresses(namespace).Delete(ctx, names[i], metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		})
	})
}

// parallel calls f(0) .. f(n-1) on -workers goroutines and returns the
// first error.
func (b *bench) parallel(ctx context.Context, n int, f func(i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range b.opts.workers {
		wg.Go(func() {
			for i := range jobs {
				if err := f(i); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

// retry calls f until it succeeds, at most five times, waiting longer after
// each failure: under load the API server may answer 429 or time out.
func retry(ctx context.Context, f func() error) error {
	var err error
	for attempt := range 5 {
		if err = f(); err == nil || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(100<<attempt) * time.Millisecond):
		}
	}
	return err
}

// updState is the Ingress the update series moves from Service to Service.
type updState struct {
	ing     *networkingv1.Ingress
	service int
}

func (b *bench) createUpdated(ctx context.Context) error {
	ing, err := b.client.NetworkingV1().Ingresses(namespace).Create(ctx, ingress(updName, updHost, serviceName(0)), metav1.CreateOptions{})
	b.upd = updState{ing: ing}
	return err
}

// moveUpdated points the updated Ingress at the next Service and returns
// the name of the backend that answers then.
func (b *bench) moveUpdated(ctx context.Context) (string, error) {
	next := (b.upd.service + 1) % services
	ing := b.upd.ing.DeepCopy()
	ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name = serviceName(next)
	updated, err := b.client.NetworkingV1().Ingresses(namespace).Update(ctx, ing, metav1.UpdateOptions{})
	if err != nil {
		return "", err
	}
	b.upd = updState{ing: updated, service: next}
	return backendName(next), nil
}

// rollState is the rolled Service: its EndpointSlice and ramjetd's pool.
type rollState struct {
	slice *discoveryv1.EndpointSlice
	pool  string
	set   int // the set of addresses in use (0 or 1)
}

// rollAddr is the i-th address of a set.
func (b *bench) rollAddr(set, i int) string {
	a := b.network.Prefix.Addr().As4()
	a[3] = byte(rollFirst + set*75 + i)
	return netip.AddrFrom4(a).String()
}

func (b *bench) createRolled(ctx context.Context) error {
	svc := harness.Service(namespace, rollName, 80, harness.BackendPort)
	if _, err := b.client.CoreV1().Services(namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return err
	}
	addrs := make([]string, b.opts.endpoints)
	for i := range addrs {
		addrs[i] = b.rollAddr(0, i)
	}
	slice, err := b.client.DiscoveryV1().EndpointSlices(namespace).Create(ctx,
		harness.EndpointSlice(namespace, rollName, harness.BackendPort, addrs...), metav1.CreateOptions{})
	if err != nil {
		return err
	}
	b.roll.slice = slice
	return b.createIngress(ctx, ingress(rollName, rollName+domain, rollName))
}

// findRollPool waits until ramjetd has the rolled Service's pool with
// every endpoint, and remembers its name.
func (b *bench) findRollPool(ctx context.Context) error {
	deadline := time.Now().Add(time.Minute)
	for {
		pools, err := b.admin.Pools(ctx)
		if err == nil {
			for _, p := range pools {
				if strings.Contains(p.Name, "_"+namespace+"_"+rollName+"_") && p.MemberCount == b.opts.endpoints {
					b.roll.pool = p.Name
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("ramjetd has no pool of the Service %s/%s with %d members after a minute (last error: %v)",
				namespace, rollName, b.opts.endpoints, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// replaceEndpoint replaces the i-th endpoint of the rolled Service with its
// address of the other set, as a rolling update replaces a pod, and
// returns the old and new addresses.
func (b *bench) replaceEndpoint(ctx context.Context, i int) (old, repl string, err error) {
	slice := b.roll.slice.DeepCopy()
	old, repl = b.rollAddr(b.roll.set, i), b.rollAddr(1-b.roll.set, i)
	slice.Endpoints[i].Addresses = []string{repl}
	updated, err := b.client.DiscoveryV1().EndpointSlices(namespace).Update(ctx, slice, metav1.UpdateOptions{})
	if err != nil {
		return old, repl, err
	}
	b.roll.slice = updated
	return old, repl, nil
}
