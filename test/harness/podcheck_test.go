package harness

import (
	"slices"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestCheckPod(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*corev1.PodSpec)
		want   []string // parts of the error; none: no error
	}{
		{name: "the chart's pod", change: func(*corev1.PodSpec) {}},
		{
			name: "host namespaces",
			change: func(s *corev1.PodSpec) {
				s.HostNetwork, s.HostPID = true, true
			},
			want: []string{"spec.hostNetwork: not supported by the harness", "spec.hostPID: not supported"},
		},
		{
			name: "probes and hooks the runner cannot run",
			change: func(s *corev1.PodSpec) {
				c := &s.Containers[1]
				c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9000}}}
				c.StartupProbe = &corev1.Probe{}
				c.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{}}}
			},
			want: []string{"spec.containers[1].readinessProbe.grpc: not supported", "spec.containers[1].startupProbe: not supported",
				"spec.containers[1].lifecycle.postStart.tcpSocket: not supported"},
		},
		{
			name: "security settings",
			change: func(s *corev1.PodSpec) {
				s.InitContainers[0].SecurityContext.Privileged = new(true)
				s.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"NET_ADMIN"}
				s.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost}
			},
			want: []string{"spec.initContainers[0].securityContext.privileged: not supported",
				"spec.containers[0].securityContext.capabilities.add: not supported",
				"spec.securityContext.seccompProfile Localhost: not supported"},
		},
		{
			name: "sidecar, host port, stop signal",
			change: func(s *corev1.PodSpec) {
				s.InitContainers[0].RestartPolicy = new(corev1.ContainerRestartPolicyAlways)
				s.Containers[0].Ports[0].HostPort = 80
				s.Containers[0].Lifecycle.StopSignal = new(corev1.Signal("SIGNOPE"))
			},
			want: []string{"spec.initContainers[0].restartPolicy (sidecar): not supported", "spec.containers[0].ports[0].hostPort: not supported",
				"spec.containers[0].lifecycle.stopSignal SIGNOPE: not supported"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := chartPod(t)
			tc.change(&pod.Spec)
			err := checkPod(pod)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("checkPod: %v, want nil", err)
				}
				return
			}
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("checkPod: %v\nwant an error with %q", err, w)
				}
			}
		})
	}
}

func TestStopSignal(t *testing.T) {
	for _, tc := range []struct {
		signal *corev1.Signal
		want   syscall.Signal
	}{
		{nil, syscall.SIGTERM},
		{new(corev1.Signal("SIGQUIT")), syscall.SIGQUIT},
		{new(corev1.Signal("SIGUSR1")), syscall.SIGUSR1},
	} {
		got, err := stopSignal(&corev1.Container{Lifecycle: &corev1.Lifecycle{StopSignal: tc.signal}})
		if err != nil || got != tc.want {
			t.Errorf("stopSignal(%v) = %v, %v; want %v", tc.signal, got, err, tc.want)
		}
	}
}

func TestContainerCredential(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pod       *corev1.PodSecurityContext
		container *corev1.SecurityContext
		imageUser string
		uid, gid  uint32
		groups    []uint32
		wantErr   string
	}{
		{name: "root by default", uid: 0, gid: 0, groups: []uint32{0}},
		{name: "the image's user", imageUser: "65532:65532", uid: 65532, gid: 65532, groups: []uint32{65532}},
		{name: "the image's user without group", imageUser: "1000", uid: 1000, gid: 0, groups: []uint32{0}},
		{
			name: "the pod's over the image's, with groups",
			pod: &corev1.PodSecurityContext{RunAsUser: new(int64(1000)), RunAsGroup: new(int64(2000)),
				SupplementalGroups: []int64{3000, 2000}, FSGroup: new(int64(4000))},
			imageUser: "65532:65532", uid: 1000, gid: 2000, groups: []uint32{2000, 3000, 4000},
		},
		{
			name:      "the container's over the pod's",
			pod:       &corev1.PodSecurityContext{RunAsUser: new(int64(1000)), RunAsGroup: new(int64(2000))},
			container: &corev1.SecurityContext{RunAsUser: new(int64(7)), RunAsGroup: new(int64(8))},
			uid:       7, gid: 8, groups: []uint32{8},
		},
		{
			name:    "runAsNonRoot with root",
			pod:     &corev1.PodSecurityContext{RunAsNonRoot: new(true)},
			wantErr: "spec.containers[0]: runAsNonRoot is set and the container would run as root (uid 0)",
		},
		{
			name:      "capabilities dropped for root",
			container: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			wantErr:   "spec.containers[0].securityContext.capabilities.drop for a root user: not supported",
		},
		{name: "named user", imageUser: "nonroot", wantErr: `image "img": user "nonroot": the harness takes numeric users only`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: tc.pod}}
			c := &corev1.Container{Image: "img", SecurityContext: tc.container}
			cred, err := containerCredential(pod, c, "spec.containers[0]", Image{User: tc.imageUser})
			if checkError(t, err, tc.wantErr) {
				return
			}
			if cred.Uid != tc.uid || cred.Gid != tc.gid || !slices.Equal(cred.Groups, tc.groups) {
				t.Errorf("user %d, group %d, groups %v; want %d, %d, %v", cred.Uid, cred.Gid, cred.Groups, tc.uid, tc.gid, tc.groups)
			}
		})
	}
}
