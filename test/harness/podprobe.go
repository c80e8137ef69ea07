package harness

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Probe kinds of Pod.Probe.
const (
	Readiness = "readiness"
	Liveness  = "liveness"
)

// probeAgent is the User-Agent of probes, as kubelet's names its version.
const probeAgent = "kube-probe/1.37"

// probeClient sends probes and httpGet hooks: it verifies no certificate
// and follows no redirect (a redirect is a success), as kubelet.
var probeClient = &http.Client{
	Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, // kubelet does not verify probes either
		DisableKeepAlives: true,
	},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// Probe runs the readiness or liveness probe of container once, as the
// manifest writes it (httpGet, tcpSocket or exec, named ports resolved,
// timeoutSeconds), against the pod's address, and returns why it failed.
func (p *Pod) Probe(container, kind string) error {
	c, err := p.container(container)
	if err != nil {
		return err
	}
	var probe *corev1.Probe
	switch kind {
	case Readiness:
		probe = c.spec.ReadinessProbe
	case Liveness:
		probe = c.spec.LivenessProbe
	default:
		return fmt.Errorf("probe kind %q: want %q or %q", kind, Readiness, Liveness)
	}
	if probe == nil {
		return fmt.Errorf("container %s has no %s probe", container, kind)
	}
	return p.probe(c, probe)
}

// probe runs probe against container c once.
func (p *Pod) probe(c *containerRun, probe *corev1.Probe) error {
	ctx, cancel := context.WithTimeout(context.Background(), seconds(probe.TimeoutSeconds, 1))
	defer cancel()
	switch h := probe.ProbeHandler; {
	case h.HTTPGet != nil:
		return p.httpGet(ctx, c, h.HTTPGet)
	case h.TCPSocket != nil:
		port, err := containerPort(c.spec, h.TCPSocket.Port)
		if err != nil {
			return err
		}
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", p.hostPort(h.TCPSocket.Host, port))
		if err != nil {
			return err
		}
		return conn.Close()
	case h.Exec != nil:
		_, err := p.exec(ctx, c, h.Exec.Command)
		return err
	}
	return fmt.Errorf("%s: the probe has no handler the harness runs", c.field)
}

// httpGet sends an httpGet probe or hook to the pod: a status from 200 to
// 399 is a success.
func (p *Pod) httpGet(ctx context.Context, c *containerRun, g *corev1.HTTPGetAction) error {
	port, err := containerPort(c.spec, g.Port)
	if err != nil {
		return err
	}
	scheme := strings.ToLower(string(g.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	path := g.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	url := scheme + "://" + p.hostPort(g.Host, port) + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", probeAgent)
	req.Header.Set("Accept", "*/*")
	for _, h := range g.HTTPHeaders {
		if strings.EqualFold(h.Name, "Host") {
			req.Host = h.Value
		} else {
			req.Header.Set(h.Name, h.Value)
		}
	}
	resp, err := probeClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// hostPort is host (empty: the pod's address) with port.
func (p *Pod) hostPort(host string, port int) string {
	if host == "" {
		host = p.IP.String()
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// containerPort resolves a probe's or hook's port: a number, or the name
// of one of the container's ports.
func containerPort(c *corev1.Container, port intstr.IntOrString) (int, error) {
	if port.Type == intstr.Int {
		return port.IntValue(), nil
	}
	for _, p := range c.Ports {
		if p.Name == port.StrVal {
			return int(p.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("container %s has no port named %q", c.Name, port.StrVal)
}

// runHandler runs a lifecycle handler of container c (exec in the
// container, httpGet to the pod, or sleep) within ctx, and returns its
// output.
func (p *Pod) runHandler(ctx context.Context, c *containerRun, h *corev1.LifecycleHandler) (string, error) {
	switch {
	case h.Exec != nil:
		return p.exec(ctx, c, h.Exec.Command)
	case h.HTTPGet != nil:
		return "", p.httpGet(ctx, c, h.HTTPGet)
	case h.Sleep != nil:
		select {
		case <-time.After(time.Duration(h.Sleep.Seconds) * time.Second):
			return "", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	return "", errors.New("the handler has no action the harness runs")
}

// watchReadiness runs c's readiness probe while c runs, as kubelet does
// (initialDelaySeconds, then every periodSeconds, or PodOptions.ProbePeriod;
// successThreshold and failureThreshold), and records the result. A
// container without a readiness probe is ready once it runs.
func (p *Pod) watchReadiness(c *containerRun) {
	probe := c.spec.ReadinessProbe
	if probe == nil {
		p.setReady(c, true, nil)
		return
	}
	period := seconds(probe.PeriodSeconds, 10)
	if p.opts.ProbePeriod > 0 {
		period = p.opts.ProbePeriod
	}
	successNeeded, failuresNeeded := int(max(probe.SuccessThreshold, 1)), int(max(probe.FailureThreshold, 1))
	timer := time.NewTimer(time.Duration(probe.InitialDelaySeconds) * time.Second)
	defer timer.Stop()
	var successes, failures int
	for {
		select {
		case <-c.exited:
			p.setReady(c, false, errors.New("the container exited"))
			return
		case <-timer.C:
		}
		err := p.probe(c, probe)
		if err == nil {
			successes, failures = successes+1, 0
		} else {
			successes, failures = 0, failures+1
		}
		ready := p.isReady(c)
		switch {
		case successes >= successNeeded:
			ready = true
		case failures >= failuresNeeded:
			ready = false
		}
		p.setReady(c, ready, err)
		timer.Reset(period)
	}
}

// seconds is s seconds, or def seconds when s is not above 0.
func seconds(s, def int32) time.Duration {
	if s <= 0 {
		s = def
	}
	return time.Duration(s) * time.Second
}

// WaitReady waits until every container is ready and the Pod object's
// status says so (its Ready condition); it fails at once when a container
// has exited, and after timeout with the reasons of the containers not
// ready.
func (p *Pod) WaitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ready, err := p.readiness()
		if ready {
			return nil
		}
		if errors.Is(err, errNeverReady) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pod %s/%s not ready after %s: %w", p.Namespace, p.Name, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// errNeverReady marks what readiness cannot come back from: a container
// that has exited (it is not restarted), a pod being deleted.
var errNeverReady = errors.New("will not be ready")

// readiness reports whether every container is ready, and else why not.
func (p *Pod) readiness() (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminating {
		return false, fmt.Errorf("pod %s/%s is deleted: %w", p.Namespace, p.Name, errNeverReady)
	}
	var errs []error
	for _, c := range p.containers {
		switch s := c.state; {
		case !s.finished.IsZero():
			return false, fmt.Errorf("container %s exited with code %d (%w); its log:\n%s", c.spec.Name, s.exitCode, errNeverReady, tail(p.log(c), 40))
		case !s.ready:
			errs = append(errs, fmt.Errorf("container %s: %v", c.spec.Name, s.probeErr))
		}
	}
	if p.written < p.changes {
		errs = append(errs, errors.New("the status is not written yet"))
	}
	return len(errs) == 0, errors.Join(errs...)
}

// setReady records the result of c's readiness probe; only a change of
// readiness is written.
func (p *Pod) setReady(c *containerRun, ready bool, why error) {
	p.mu.Lock()
	same := c.state.ready == ready
	c.state.probeErr = why
	p.mu.Unlock()
	if !same {
		p.update(func() { c.state.ready = ready })
	}
}

// isReady reports whether c is ready, as its probes last said.
func (p *Pod) isReady(c *containerRun) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return c.state.ready
}
