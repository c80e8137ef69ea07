package harness

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
)

// errUnsupported marks the fields of a pod the harness cannot run as
// written; every such error names the field.
var errUnsupported = errors.New("not supported by the harness")

// unsupported returns an error naming the field when it is set.
func unsupported(set bool, field string) error {
	if set {
		return fmt.Errorf("%s: %w", field, errUnsupported)
	}
	return nil
}

// checkPod fails, naming each field, for what the runner does not do.
// Scheduling fields (nodeSelector, affinity, tolerations...), resources,
// imagePullPolicy, dnsPolicy and restartPolicy are accepted: the one node
// runs every pod, nothing is enforced or pulled, there is no cluster DNS,
// and a container that exits is reported, not restarted.
func checkPod(pod *corev1.Pod) error {
	s := &pod.Spec
	sc := s.SecurityContext
	if sc == nil {
		sc = &corev1.PodSecurityContext{}
	}
	errs := []error{
		unsupported(s.HostNetwork, "spec.hostNetwork"),
		unsupported(s.HostPID, "spec.hostPID"),
		unsupported(s.HostIPC, "spec.hostIPC"),
		unsupported(s.ShareProcessNamespace != nil && *s.ShareProcessNamespace, "spec.shareProcessNamespace"),
		unsupported(len(s.HostAliases) > 0, "spec.hostAliases"),
		unsupported(s.DNSConfig != nil, "spec.dnsConfig"),
		unsupported(s.RuntimeClassName != nil, "spec.runtimeClassName"),
		unsupported(len(s.ReadinessGates) > 0, "spec.readinessGates"),
		unsupported(len(s.EphemeralContainers) > 0, "spec.ephemeralContainers"),
		unsupported(len(s.ResourceClaims) > 0, "spec.resourceClaims"),
		unsupported(len(sc.Sysctls) > 0, "spec.securityContext.sysctls"),
		unsupported(sc.SELinuxOptions != nil, "spec.securityContext.seLinuxOptions"),
		checkSeccomp(sc.SeccompProfile, "spec.securityContext.seccompProfile"),
		checkAppArmor(sc.AppArmorProfile, "spec.securityContext.appArmorProfile"),
	}
	for i := range s.InitContainers {
		c := &s.InitContainers[i]
		field := fmt.Sprintf("spec.initContainers[%d]", i)
		errs = append(errs,
			unsupported(c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways, field+".restartPolicy (sidecar)"),
			checkContainer(c, field))
	}
	for i := range s.Containers {
		errs = append(errs, checkContainer(&s.Containers[i], fmt.Sprintf("spec.containers[%d]", i)))
	}
	return errors.Join(errs...)
}

// checkContainer fails for the fields of a container the runner does not
// do.
func checkContainer(c *corev1.Container, field string) error {
	errs := []error{
		unsupported(c.StartupProbe != nil, field+".startupProbe"),
		unsupported(len(c.VolumeDevices) > 0, field+".volumeDevices"),
		unsupported(c.Stdin || c.TTY, field+".stdin/tty"),
		unsupported(len(c.ResizePolicy) > 0, field+".resizePolicy"),
		checkProbe(c.ReadinessProbe, field+".readinessProbe"),
		checkProbe(c.LivenessProbe, field+".livenessProbe"),
	}
	for i, p := range c.Ports {
		errs = append(errs, unsupported(p.HostPort != 0, fmt.Sprintf("%s.ports[%d].hostPort", field, i)))
	}
	if l := c.Lifecycle; l != nil {
		errs = append(errs,
			checkHandler(l.PostStart, field+".lifecycle.postStart"),
			checkHandler(l.PreStop, field+".lifecycle.preStop"))
		if _, err := stopSignal(c); err != nil {
			errs = append(errs, fmt.Errorf("%s.%w", field, err))
		}
	}
	if sc := c.SecurityContext; sc != nil {
		errs = append(errs,
			unsupported(sc.Privileged != nil && *sc.Privileged, field+".securityContext.privileged"),
			unsupported(sc.SELinuxOptions != nil, field+".securityContext.seLinuxOptions"),
			unsupported(sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount, field+".securityContext.procMount"),
			unsupported(sc.Capabilities != nil && len(sc.Capabilities.Add) > 0, field+".securityContext.capabilities.add"),
			checkSeccomp(sc.SeccompProfile, field+".securityContext.seccompProfile"),
			checkAppArmor(sc.AppArmorProfile, field+".securityContext.appArmorProfile"))
	}
	return errors.Join(errs...)
}

// checkSeccomp accepts RuntimeDefault and Unconfined: the harness applies
// no seccomp filter, so RuntimeDefault runs unconfined.
func checkSeccomp(p *corev1.SeccompProfile, field string) error {
	return unsupported(p != nil && p.Type == corev1.SeccompProfileTypeLocalhost, field+" Localhost")
}

// checkAppArmor accepts RuntimeDefault and Unconfined, like checkSeccomp.
func checkAppArmor(p *corev1.AppArmorProfile, field string) error {
	return unsupported(p != nil && p.Type == corev1.AppArmorProfileTypeLocalhost, field+" Localhost")
}

// checkProbe accepts the probes the runner can run: httpGet, tcpSocket and
// exec.
func checkProbe(p *corev1.Probe, field string) error {
	if p == nil {
		return nil
	}
	return unsupported(p.GRPC != nil, field+".grpc")
}

// checkHandler accepts the lifecycle handlers the runner can run: exec,
// httpGet and sleep.
func checkHandler(h *corev1.LifecycleHandler, field string) error {
	if h == nil {
		return nil
	}
	return unsupported(h.TCPSocket != nil, field+".tcpSocket")
}

// stopSignal returns the signal that stops container c: its
// lifecycle.stopSignal, else SIGTERM.
func stopSignal(c *corev1.Container) (syscall.Signal, error) {
	if c.Lifecycle == nil || c.Lifecycle.StopSignal == nil {
		return syscall.SIGTERM, nil
	}
	name := string(*c.Lifecycle.StopSignal)
	if sig := unix.SignalNum(name); sig != 0 {
		return sig, nil
	}
	return 0, fmt.Errorf("lifecycle.stopSignal %s: %w", name, errUnsupported)
}

// containerCredential returns the user, group and groups container c runs
// as: runAsUser and runAsGroup of the container, else of the pod, else
// the image's user (root without one); the groups are the primary one,
// the pod's supplementalGroups and its fsGroup. runAsNonRoot with user 0
// fails as kubelet fails it, and so does capabilities.drop for root (the
// harness cannot drop a root process's capabilities; a non-root process
// has none).
func containerCredential(pod *corev1.Pod, c *corev1.Container, field string, img Image) (*syscall.Credential, error) {
	psc := pod.Spec.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	csc := c.SecurityContext
	if csc == nil {
		csc = &corev1.SecurityContext{}
	}
	uid, gid, err := imageUser(img.User)
	if err != nil {
		return nil, fmt.Errorf("%s: image %q: %w", field, c.Image, err)
	}
	uid = firstSet(uid, csc.RunAsUser, psc.RunAsUser)
	gid = firstSet(gid, csc.RunAsGroup, psc.RunAsGroup)
	nonRoot := csc.RunAsNonRoot
	if nonRoot == nil {
		nonRoot = psc.RunAsNonRoot
	}
	if nonRoot != nil && *nonRoot && uid == 0 {
		return nil, fmt.Errorf("%s: runAsNonRoot is set and the container would run as root (uid 0)", field)
	}
	if uid == 0 && csc.Capabilities != nil && len(csc.Capabilities.Drop) > 0 {
		return nil, fmt.Errorf("%s.securityContext.capabilities.drop for a root user: %w", field, errUnsupported)
	}
	groups := []uint32{uint32(gid)}
	for _, g := range append(psc.SupplementalGroups, firstSet(-1, psc.FSGroup)) {
		if g >= 0 && !slices.Contains(groups, uint32(g)) {
			groups = append(groups, uint32(g))
		}
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: groups}, nil
}

// imageUser parses an image's numeric "UID" or "UID:GID" (empty: root).
func imageUser(user string) (uid, gid int64, err error) {
	if user == "" {
		return 0, 0, nil
	}
	u, g, hasGroup := strings.Cut(user, ":")
	if uid, err = strconv.ParseInt(u, 10, 32); err != nil {
		return 0, 0, fmt.Errorf("user %q: the harness takes numeric users only", user)
	}
	if !hasGroup {
		return uid, 0, nil
	}
	if gid, err = strconv.ParseInt(g, 10, 32); err != nil {
		return 0, 0, fmt.Errorf("user %q: the harness takes numeric groups only", user)
	}
	return uid, gid, nil
}

// firstSet returns the first of values that is set, else def.
func firstSet(def int64, values ...*int64) int64 {
	for _, v := range values {
		if v != nil {
			return *v
		}
	}
	return def
}
