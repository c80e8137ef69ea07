//go:build conformance

package cluster

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// readyTimeout bounds the wait for the controllers and the node.
const readyTimeout = 90 * time.Second

// Cluster is a test cluster: an API server with its controllers, a
// scheduler, one Node whose pods run as local processes in a Network, and
// a load balancer for Services of type LoadBalancer.
type Cluster struct {
	// Cluster is the API server (see harness.StartAPIServer): Client,
	// Config, Kubeconfig, Apply, Kubectl.
	*harness.Cluster
	// Network holds the pods' addresses and the load balancers'.
	Network *harness.Network

	programs []*harness.Program
	logs     *logServer
	runner   *podRunner
	lb       *loadBalancer
}

// Option changes how Start sets the cluster up.
type Option func(*options)

type options struct {
	api      []harness.Option
	registry harness.Registry
}

// WithAPIServer passes options to harness.StartAPIServer, such as
// harness.WithCRDs.
func WithAPIServer(opts ...harness.Option) Option {
	return func(o *options) { o.api = append(o.api, opts...) }
}

// WithImages adds images to the registry the pod runner runs (see
// Registry); an image of the same repository replaces the default one.
func WithImages(r harness.Registry) Option {
	return func(o *options) {
		for k, v := range r {
			o.registry[k] = v
		}
	}
}

// Start starts a cluster for t and stops it when t ends (the last lines of
// the components' logs go to t's log when t failed). It returns once the
// controllers run (the ServiceAccount default exists) and the Node is
// Ready; a failure to start fails t.
func Start(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	reg, err := Registry()
	if err != nil {
		t.Fatalf("cluster: %v", err)
	}
	o := options{registry: reg}
	for _, opt := range opts {
		opt(&o)
	}
	bin, err := harness.RequireBinaries(programs...)
	if err != nil {
		t.Fatalf("cluster: %v", err)
	}
	c := &Cluster{Network: harness.NewNetwork(t)}
	c.Cluster = harness.StartAPIServer(t, append([]harness.Option{
		harness.WithAPIServerFlags("--kubelet-preferred-address-types=InternalIP"),
	}, o.api...)...)
	t.Cleanup(func() {
		c.stop()
		if t.Failed() {
			c.logTails(t)
		}
	})
	if err := c.start(bin, o.registry, t.TempDir()); err != nil {
		t.Fatalf("cluster: %v", err)
	}
	return c
}

// start starts everything besides the API server.
func (c *Cluster) start(bin string, reg harness.Registry, dir string) error {
	var err error
	if c.logs, err = startLogServer(); err != nil {
		return err
	}
	for _, p := range []func(string) (*harness.Program, error){c.startControllerManager, c.startScheduler} {
		prog, err := p(bin)
		if err != nil {
			return err
		}
		c.programs = append(c.programs, prog)
	}
	if err := c.createNode(); err != nil {
		return err
	}
	prog, err := c.startKwok(bin)
	if err != nil {
		return err
	}
	c.programs = append(c.programs, prog)
	c.runner = startPodRunner(c.Cluster, c.Network, reg, filepath.Join(dir, "pods"))
	c.logs.pods = c.runner
	c.lb = startLoadBalancer(c.Client, c.Network)
	return c.waitReady()
}

// waitReady waits until the controllers have created the ServiceAccount
// default and kwok has made the Node Ready.
func (c *Cluster) waitReady() error {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	for {
		err := c.ready(ctx)
		if err == nil {
			return nil
		}
		for _, p := range c.programs {
			if p.Exited() {
				return fmt.Errorf("%s exited:\n%s", p.Name, tail(p.Log(), 30))
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the cluster is not ready after %s: %w", readyTimeout, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ready fails until the cluster is ready.
func (c *Cluster) ready(ctx context.Context) error {
	if _, err := c.Client.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return errors.New("kube-controller-manager has not created the ServiceAccount default yet")
		}
		return err
	}
	node, err := c.Client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if !nodeReady(node) {
		return errors.New("kwok has not made the Node " + NodeName + " Ready yet")
	}
	if len(node.Spec.Taints) > 0 {
		// The API server taints a new Node not-ready, and without the node
		// lifecycle controller nothing removes the taint once it is Ready.
		node.Spec.Taints = nil
		if _, err := c.Client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// stop stops the pods, the load balancer and the components.
func (c *Cluster) stop() {
	if c.runner != nil {
		c.runner.stop()
	}
	if c.lb != nil {
		c.lb.stop()
	}
	for _, p := range c.programs {
		p.Stop()
	}
	if c.logs != nil {
		c.logs.close()
	}
}

// logTails writes the last lines of the components' logs and the pod
// runner's errors to t's log.
func (c *Cluster) logTails(t testing.TB) {
	t.Helper()
	for _, p := range c.programs {
		t.Logf("cluster: the test failed; last lines of %s (%s):\n%s", p.Name, p.LogPath, tail(p.Log(), 40))
	}
	if c.runner != nil {
		for _, err := range c.runner.errors() {
			t.Logf("cluster: pod runner: %v", err)
		}
	}
}

// componentLog is the log file of a component of the cluster.
func (c *Cluster) componentLog(name string) string { return filepath.Join(c.Dir, name+".log") }

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
