package harness

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ramjet-dev/ramjet/test/harness/internal/container"
)

// startAPIProxy forwards the "kubernetes" Service's address inside the
// pod to the API server.
func (p *Pod) startAPIProxy(ctx context.Context, c *Cluster) error {
	svc, err := p.client.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("the API server's Service default/kubernetes: %w", err)
	}
	addr, err := netip.ParseAddr(svc.Spec.ClusterIP)
	if err != nil || len(svc.Spec.Ports) == 0 {
		return fmt.Errorf("the Service default/kubernetes has no cluster IP and port (%q)", svc.Spec.ClusterIP)
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return err
	}
	p.proxy, err = startAPIProxy(p.net, netip.AddrPortFrom(addr, uint16(svc.Spec.Ports[0].Port)), u.Host)
	return err
}

// prepare writes the volumes and the pod's files and plans every
// container, so that nothing runs when one of them cannot.
func (p *Pod) prepare(ctx context.Context, in *podInputs) error {
	vols, err := planVolumes(p.obj, p.Dir)
	if err != nil {
		return err
	}
	if err := p.writeVolumes(ctx, vols, in); err != nil {
		return err
	}
	files, err := p.writePodFiles()
	if err != nil {
		return err
	}
	var errs []error
	var inits, containers []*containerRun
	plan := func(c *corev1.Container, field string) *containerRun {
		rc, err := p.planContainer(c, field, in, vols, files)
		errs = append(errs, err)
		return rc
	}
	for i := range p.obj.Spec.InitContainers {
		inits = append(inits, plan(&p.obj.Spec.InitContainers[i], fmt.Sprintf("spec.initContainers[%d]", i)))
	}
	for i := range p.obj.Spec.Containers {
		containers = append(containers, plan(&p.obj.Spec.Containers[i], fmt.Sprintf("spec.containers[%d]", i)))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	p.update(func() { p.inits, p.containers = inits, containers })
	return nil
}

// planContainer resolves what container c runs: image, environment,
// command, user and mounts.
func (p *Pod) planContainer(c *corev1.Container, field string, in *podInputs, vols map[string]*podVolume, files podFiles) (*containerRun, error) {
	img, err := p.opts.Registry.Image(c.Image)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	p.mu.Lock()
	env, kubelet, err := containerEnv(p.obj, c, field, img, in)
	p.mu.Unlock()
	if err != nil {
		return nil, err
	}
	argv, err := containerArgv(c, field, img, kubelet)
	if err != nil {
		return nil, err
	}
	cred, err := containerCredential(p.obj, c, field, img)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(p.Dir, "containers", c.Name)
	if err := os.MkdirAll(filepath.Join(dir, "root"), 0o755); err != nil {
		return nil, err
	}
	termination := filepath.Join(dir, "termination-log")
	if err := os.WriteFile(termination, nil, 0o666); err != nil {
		return nil, err
	}
	if err := os.Chmod(termination, 0o666); err != nil { // whatever the umask
		return nil, err
	}
	mounts, err := containerMounts(c, field, img, vols, files, termination)
	if err != nil {
		return nil, err
	}
	sc := c.SecurityContext
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	return &containerRun{
		spec: c, field: field, image: Repository(c.Image),
		logPath: p.LogPath(c.Name),
		exited:  make(chan struct{}),
		init: container.Spec{
			NetNS: p.net.path(), Root: filepath.Join(dir, "root"), Hostname: podHostname(p.obj),
			Mounts:       mounts,
			ReadOnlyRoot: sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem,
			NoNewPrivs:   sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation,
			UID:          cred.Uid, GID: cred.Gid, Groups: cred.Groups,
			Env: env, Dir: firstNonEmpty(c.WorkingDir, img.WorkingDir, "/"), Argv: argv,
		},
	}, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// writeVolumes creates the emptyDir folders and writes the files of the
// other volumes.
func (p *Pod) writeVolumes(ctx context.Context, vols map[string]*podVolume, in *podInputs) error {
	var fsGroup *int64
	if sc := p.obj.Spec.SecurityContext; sc != nil {
		fsGroup = sc.FSGroup
	}
	for i := range p.obj.Spec.Volumes {
		v := &p.obj.Spec.Volumes[i]
		pv := vols[v.Name]
		if pv.kind == kindEmptyDir {
			if err := makeEmptyDir(pv.dir, fsGroup); err != nil {
				return err
			}
			continue
		}
		files, err := volumeFiles(p.obj, v, fmt.Sprintf("spec.volumes[%d]", i), in, func(audience string, expiration int64) (string, error) {
			return p.token(ctx, audience, expiration)
		})
		if err != nil {
			return err
		}
		if err := writeVolume(pv.dir, files, fsGroup); err != nil {
			return fmt.Errorf("writing volume %s: %w", v.Name, err)
		}
	}
	return makeSubPaths(p.obj, vols, fsGroup)
}

// writePodFiles writes the pod's /etc/hosts, /etc/hostname and
// /etc/resolv.conf, as kubelet and the runtime write them (there is no
// cluster DNS: resolv.conf names no server).
func (p *Pod) writePodFiles() (podFiles, error) {
	dir := filepath.Join(p.Dir, "etc")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return podFiles{}, err
	}
	host := podHostname(p.obj)
	files := podFiles{hosts: filepath.Join(dir, "hosts"), hostname: filepath.Join(dir, "hostname"), resolvConf: filepath.Join(dir, "resolv.conf")}
	for path, content := range map[string]string{
		files.hosts: "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" +
			p.IP.String() + "\t" + host + "\n",
		files.hostname:   host + "\n",
		files.resolvConf: "# the harness runs no cluster DNS\nsearch " + p.Namespace + ".svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n",
	} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return podFiles{}, err
		}
	}
	return files, nil
}
