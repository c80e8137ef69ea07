package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// The release the demo installs, and so the chart's object names.
const (
	release          = "ingress"
	releaseNamespace = "ingress"
	workload         = release + "-ramjet"
)

// Ports of the chart's pod: ramjetd's listeners and health listener, the
// controller's health and metrics.
const (
	podHTTPPort       = 8080
	podHTTPSPort      = 8443
	podRamjetdPort    = 10255
	podControllerPort = 10254
)

// podReadyTimeout bounds the wait for the chart's pod to be ready.
const podReadyTimeout = 2 * time.Minute

// startRamjet installs charts/ramjet into the local API server with helm
// and runs the pod of its Deployment as a kubelet would (the chart's
// containers, volumes, users and probes, as processes in a network
// namespace of their own), then plays the cloud's load balancer: it gives
// the chart's Service the address 127.0.0.1 and forwards the demo's ports
// there to the pod's listeners.
func (d *demo) startRamjet(ctx context.Context) error {
	title := fmt.Sprintf("installing charts/ramjet (helm install %s) and running its pod; its Service's load balancer is 127.0.0.1:%d and :%d",
		release, d.httpPort, d.httpsPort)
	return d.p.step(title, "a few seconds: the harness builds the pod's programs first", func(note func(string)) error {
		// The harness builds into a temporary folder of its own: inside the
		// run folder, it goes with it.
		if err := os.Setenv("TMPDIR", filepath.Join(d.run, "tmp")); err != nil {
			return err
		}
		if err := runCommand(ctx, note, d.root, filepath.Join(d.tools, "helm"), "install", release, "charts/ramjet",
			"--namespace", releaseNamespace, "--create-namespace", "--kubeconfig", d.cluster.Kubeconfig,
			"--set", "drainDelaySeconds=1", "--set", "shutdownTimeoutSeconds=5"); err != nil {
			return err
		}
		pod, err := harness.NewPod(d.cluster, d.network, harness.Deployment(releaseNamespace, workload), filepath.Join(d.run, "pod"), harness.PodOptions{})
		if err != nil {
			return err
		}
		d.pod = pod
		note(fmt.Sprintf("pod %s/%s at %s: init container bootstrap, then ramjetd and controller as user 65532", pod.Namespace, pod.Name, pod.IP))
		if err := pod.WaitReady(podReadyTimeout); err != nil {
			return err
		}
		for _, f := range []struct{ from, to int }{{d.httpPort, podHTTPPort}, {d.httpsPort, podHTTPSPort}} {
			lb, err := forward(loopback(f.from), net.JoinHostPort(pod.IP.String(), fmt.Sprint(f.to)))
			if err != nil {
				return err
			}
			d.balancers = append(d.balancers, lb)
		}
		if err := d.publishBalancer(ctx); err != nil {
			return err
		}
		note("ramjetd: health http://" + d.ramjetdAddr() + ", admin socket " + d.adminSocket())
		note("controller: http://" + d.controllerAddr() + " (/healthz, /readyz, /metrics); ready: its first configuration is loaded, nothing is served yet")
		return nil
	})
}

// publishBalancer writes the load balancer's address into the status of
// the chart's Service, as a cloud would; the controller copies it into the
// Ingresses' status.
func (d *demo) publishBalancer(ctx context.Context) error {
	services := d.cluster.Client.CoreV1().Services(releaseNamespace)
	svc, err := services.Get(ctx, workload, metav1.GetOptions{})
	if err != nil {
		return err
	}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "127.0.0.1"}}
	_, err = services.UpdateStatus(ctx, svc, metav1.UpdateOptions{})
	return err
}

func (d *demo) ramjetdAddr() string {
	return net.JoinHostPort(d.pod.IP.String(), fmt.Sprint(podRamjetdPort))
}

func (d *demo) controllerAddr() string {
	return net.JoinHostPort(d.pod.IP.String(), fmt.Sprint(podControllerPort))
}

// adminSocket is ramjetd's admin socket, seen from the host.
func (d *demo) adminSocket() string { return filepath.Join(d.pod.VolumeDir("admin"), "admin.sock") }

// balancer forwards the TCP connections of a listener to one address.
type balancer struct {
	l     net.Listener
	to    string
	conns sync.WaitGroup
}

// forward starts a balancer on from (loopback) to to (the pod).
func forward(from, to string) (*balancer, error) {
	l, err := net.Listen("tcp", from)
	if err != nil {
		return nil, err
	}
	b := &balancer{l: l, to: to}
	go b.serve()
	return b, nil
}

func (b *balancer) serve() {
	for {
		c, err := b.l.Accept()
		if err != nil {
			return // closed
		}
		b.conns.Add(1)
		go func() {
			defer b.conns.Done()
			b.relay(c)
		}()
	}
}

// relay copies both ways between the client and the pod until either side
// closes.
func (b *balancer) relay(client net.Conn) {
	defer client.Close()
	backend, err := net.DialTimeout("tcp", b.to, 5*time.Second)
	if err != nil {
		return
	}
	defer backend.Close()
	done := make(chan struct{}, 2)
	for _, p := range [][2]net.Conn{{backend, client}, {client, backend}} {
		go func() {
			_, _ = io.Copy(p[0], p[1])
			if tcp, ok := p[0].(*net.TCPConn); ok {
				_ = tcp.CloseWrite()
			}
			done <- struct{}{}
		}()
	}
	<-done
	<-done
}

// Close stops accepting; connections in flight end with their peers.
func (b *balancer) Close() error {
	err := b.l.Close()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
