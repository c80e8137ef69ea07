package harness

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/ramjet-dev/ramjet/test/harness/internal/container"
)

// chartPod returns a Pod of the Deployment of testdata/ramjet-pod.yaml,
// with the defaults the API server would add to the fields the runner
// reads.
func chartPod(t *testing.T) *corev1.Pod {
	t.Helper()
	data, err := os.ReadFile("testdata/ramjet-pod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for doc := range strings.SplitSeq(string(data), "\n---\n") {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := obj.(*appsv1.Deployment); ok {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: d.Name + "-abcde"}, Spec: d.Spec.Template.Spec}
			for i := range pod.Spec.Containers {
				pod.Spec.Containers[i].TerminationMessagePath = corev1.TerminationMessagePathDefault
			}
			return pod
		}
	}
	t.Fatal("no Deployment in testdata/ramjet-pod.yaml")
	return nil
}

func TestPlanVolumes(t *testing.T) {
	pod := chartPod(t)
	vols, err := planVolumes(pod, "/pod")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]podVolume{
		"generated":       {name: "generated", kind: kindEmptyDir, dir: "/pod/volumes/generated"},
		"admin":           {name: "admin", kind: kindEmptyDir, dir: "/pod/volumes/admin"},
		"base":            {name: "base", kind: kindConfigMap, dir: "/pod/volumes/base", readOnly: true},
		"kube-api-access": {name: "kube-api-access", kind: kindProjected, dir: "/pod/volumes/kube-api-access", readOnly: true},
	}
	if len(vols) != len(want) {
		t.Errorf("%d volumes, want %d", len(vols), len(want))
	}
	for name, w := range want {
		if got := vols[name]; got == nil || *got != w {
			t.Errorf("volume %s: %+v, want %+v", name, got, w)
		}
	}

	pod.Spec.Volumes = append(pod.Spec.Volumes,
		corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc"}}},
		corev1.Volume{Name: "claim", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}})
	_, err = planVolumes(pod, "/pod")
	for _, w := range []string{
		"spec.volumes[4] (host): hostPath volumes are not supported by the harness",
		"spec.volumes[5] (claim): persistentVolumeClaim volumes are not supported",
	} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("planVolumes: %v\nwant an error with %q", err, w)
		}
	}
}

func TestVolumeFiles(t *testing.T) {
	in := envInputs()
	token := func(audience string, expiration int64) (string, error) {
		return "token-for-" + audience + "-" + strings.Repeat("x", int(expiration/3600)), nil
	}
	mode := func(m int32) *int32 { return &m }
	for _, tc := range []struct {
		name    string
		source  corev1.VolumeSource
		want    []volumeFile
		wantErr string
	}{
		{
			name:   "configMap: every key",
			source: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}}},
			want: []volumeFile{{"PORT", []byte("8080"), 0o644}, {"bad-name", []byte("x"), 0o644},
				{"blob", []byte("b"), 0o644}, {"level", []byte("debug"), 0o644}},
		},
		{
			name: "configMap: items, modes",
			source: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}, DefaultMode: mode(0o600),
				Items: []corev1.KeyToPath{{Key: "level", Path: "conf/level"}, {Key: "PORT", Path: "port", Mode: mode(0o400)}},
			}},
			want: []volumeFile{{"conf/level", []byte("debug"), 0o600}, {"port", []byte("8080"), 0o400}},
		},
		{
			name:    "configMap: a missing item",
			source:  corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}, Items: []corev1.KeyToPath{{Key: "nope", Path: "p"}}}},
			wantErr: `spec.volumes[0].configMap.items[0]: key "nope" not found in configMap "conf"`,
		},
		{
			name:   "secret: optional and missing",
			source: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "nope", Optional: new(true)}},
		},
		{
			name:    "secret: missing",
			source:  corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "nope"}},
			wantErr: `spec.volumes[0].secret: secret "nope" not found`,
		},
		{
			name: "projected: token, configMap, secret, downwardAPI",
			source: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: mode(0o444), Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", Audience: "api", ExpirationSeconds: new(int64(7200))}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}, Items: []corev1.KeyToPath{{Key: "level", Path: "level"}}}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "ns", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
			}}},
			want: []volumeFile{{"token", []byte("token-for-api-xx"), 0o444}, {"level", []byte("debug"), 0o444},
				{"password", []byte("s3cret"), 0o444}, {"ns", []byte("shop"), 0o444}},
		},
		{
			name:    "projected: clusterTrustBundle",
			source:  corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Path: "b"}}}}},
			wantErr: "spec.volumes[0].projected.sources[0]: clusterTrustBundle sources are not supported by the harness",
		},
		{
			name: "downwardAPI: labels",
			source: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
			}}},
			want: []volumeFile{{"labels", []byte("app=\"web\"\ntier=\"front\""), 0o644}},
		},
		{
			name: "downwardAPI: resourceFieldRef",
			source: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "cpu", ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}},
			}}},
			wantErr: "spec.volumes[0].downwardAPI.items[0]: only fieldRef is supported by the harness",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &corev1.Volume{Name: "v", VolumeSource: tc.source}
			got, err := volumeFiles(envPod(), v, "spec.volumes[0]", in, token)
			if checkError(t, err, tc.wantErr) {
				return
			}
			if !slices.EqualFunc(got, tc.want, func(a, b volumeFile) bool {
				return a.path == b.path && string(a.data) == string(b.data) && a.mode == b.mode
			}) {
				t.Errorf("files:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestContainerMounts(t *testing.T) {
	pod := chartPod(t)
	vols, err := planVolumes(pod, "/pod")
	if err != nil {
		t.Fatal(err)
	}
	files := podFiles{hosts: "/pod/etc/hosts", hostname: "/pod/etc/hostname", resolvConf: "/pod/etc/resolv.conf"}
	image := Image{Files: map[string]string{"/usr/local/bin/ramjetd": "/bin/ramjetd", "/usr/local/bin/ramjet-ingress": "/bin/ramjet-ingress"}}
	got, err := containerMounts(&pod.Spec.Containers[1], "spec.containers[1]", image, vols, files, "/pod/c/termination-log")
	if err != nil {
		t.Fatal(err)
	}
	// Parents before children; the kinds kubelet mounts read-only are.
	want := []container.Mount{
		{Source: "/pod/c/termination-log", Target: "/dev/termination-log"},
		{Source: "/pod/etc/hostname", Target: "/etc/hostname", ReadOnly: true},
		{Source: "/pod/etc/hosts", Target: "/etc/hosts", ReadOnly: true},
		{Source: "/pod/etc/resolv.conf", Target: "/etc/resolv.conf", ReadOnly: true},
		{Source: "/pod/volumes/admin", Target: "/run/ramjet"},
		{Source: "/pod/volumes/base", Target: "/etc/ramjet/base", ReadOnly: true},
		{Source: "/pod/volumes/generated", Target: "/etc/ramjet/generated"},
		{Source: "/bin/ramjet-ingress", Target: "/usr/local/bin/ramjet-ingress", ReadOnly: true},
		{Source: "/bin/ramjetd", Target: "/usr/local/bin/ramjetd", ReadOnly: true},
		{Source: "/pod/volumes/kube-api-access", Target: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
	}
	if !slices.Equal(got, want) {
		t.Errorf("mounts of the controller:\n got %+v\nwant %+v", got, want)
	}

	for _, tc := range []struct {
		name  string
		mount corev1.VolumeMount
		want  string
	}{
		{"subPath", corev1.VolumeMount{Name: "generated", MountPath: "/x", SubPath: "a/b"}, ""},
		{"unknown volume", corev1.VolumeMount{Name: "nope", MountPath: "/x"}, "spec.containers[1].volumeMounts[4] (nope): the pod has no such volume"},
		{"subPath out of the volume", corev1.VolumeMount{Name: "generated", MountPath: "/x", SubPath: "../etc"}, `subPath "../etc": must be a relative path that does not climb with ".."`},
		{"subPathExpr", corev1.VolumeMount{Name: "generated", MountPath: "/x", SubPathExpr: "$(POD_NAME)"}, "subPathExpr: not supported by the harness"},
		{"propagation", corev1.VolumeMount{Name: "generated", MountPath: "/x", MountPropagation: new(corev1.MountPropagationBidirectional)}, "mountPropagation Bidirectional: not supported"},
		{"relative path", corev1.VolumeMount{Name: "generated", MountPath: "x"}, `mount path "x" is not a clean absolute path`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pod.Spec.Containers[1].DeepCopy()
			c.VolumeMounts = append(c.VolumeMounts, tc.mount)
			got, err := containerMounts(c, "spec.containers[1]", image, vols, files, "/pod/c/termination-log")
			if tc.want == "" {
				if err != nil || !slices.Contains(got, container.Mount{Source: "/pod/volumes/generated/a/b", Target: "/x"}) {
					t.Errorf("mounts %+v, %v; want /x from the subPath a/b", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

// TestWriteVolume writes a volume as kubelet's atomic writer lays it out,
// with an fsGroup (the test runs as root, as the end-to-end tests do).
func TestWriteVolume(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "v")
	files := []volumeFile{{"token", []byte("t"), 0o600}, {"conf/level", []byte("debug"), 0o644}}
	if err := writeVolume(dir, files, new(int64(65532))); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, content string
		mode          os.FileMode
	}{
		{"token", "t", 0o640},
		{"conf/level", "debug", 0o644},
	} {
		p := filepath.Join(dir, tc.path)
		data, err := os.ReadFile(p)
		info, statErr := os.Stat(p)
		if err != nil || statErr != nil || string(data) != tc.content || info.Mode().Perm() != tc.mode || fileGroup(info) != 65532 {
			t.Errorf("%s: %q (%v, %v), want %q, mode %v and group 65532", tc.path, data, info, err, tc.content, tc.mode)
		}
	}
	for _, link := range []string{"..data", "token", "conf"} {
		if info, err := os.Lstat(filepath.Join(dir, link)); err != nil || info.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no symbolic link: %v, %v", link, info, err)
		}
	}
	if target, _ := os.Readlink(filepath.Join(dir, "token")); target != "..data/token" {
		t.Errorf("token links to %q, want ..data/token", target)
	}
}

func TestMakeEmptyDir(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fsGroup *int64
		mode    os.FileMode
		group   int
	}{
		{"without fsGroup", nil, os.ModeDir | 0o777, 0},
		{"with fsGroup", new(int64(65532)), os.ModeDir | os.ModeSetgid | 0o777, 65532},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "e")
			if err := makeEmptyDir(dir, tc.fsGroup); err != nil {
				t.Fatal(err)
			}
			info, err := os.Stat(dir)
			if err != nil || info.Mode() != tc.mode || fileGroup(info) != tc.group {
				t.Errorf("emptyDir %v (group %d), %v; want %v, group %d", info.Mode(), fileGroup(info), err, tc.mode, tc.group)
			}
		})
	}
}
