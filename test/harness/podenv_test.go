package harness

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// checkError fails t unless err is what the case wants: an error that
// holds want, or none when want is empty. It reports whether the case
// wanted an error (and so ends there).
func checkError(t *testing.T, err error, want string) bool {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatal(err)
		}
		return false
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want one with %q", err, want)
	}
	return true
}

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "a", "EMPTY": "", "B": "$(A)"}
	lookup := func(name string) (string, bool) { v, ok := vars[name]; return v, ok }
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "text", "text"},
		{"variable", "$(A)", "a"},
		{"inside text", "x$(A)y$(A)", "xaya"},
		{"empty value", "[$(EMPTY)]", "[]"},
		{"unknown stays", "$(NOPE)/$(A)", "$(NOPE)/a"},
		{"escaped", "$$(A)", "$(A)"},
		{"double escape", "$$$$", "$$"},
		{"escape then variable", "$$$(A)", "$a"},
		{"value not expanded again", "$(B)", "$(A)"},
		{"lone dollar", "a$b", "a$b"},
		{"trailing dollar", "cost$", "cost$"},
		{"unclosed", "$(A", "$(A"},
		{"unclosed then variable", "$($(A)", "$($(A)"},
		{"empty name", "$()", "$()"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := expand(tc.in, lookup); got != tc.want {
				t.Errorf("expand(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// envPod is the pod of the environment tests.
func envPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-abcde", Namespace: "shop", UID: "uid-1",
			Labels: map[string]string{"app": "web", "tier": "front"}, Annotations: map[string]string{"note": "hi"},
		},
		Spec: corev1.PodSpec{NodeName: NodeName, ServiceAccountName: "web"},
		Status: corev1.PodStatus{
			HostIP: "198.18.0.1", HostIPs: []corev1.HostIP{{IP: "198.18.0.1"}},
			PodIP: "198.18.0.3", PodIPs: []corev1.PodIP{{IP: "198.18.0.3"}},
		},
	}
}

// envInputs are the objects of the environment tests.
func envInputs() *podInputs {
	return &podInputs{
		configMaps: map[string]*corev1.ConfigMap{"conf": {
			Data: map[string]string{"level": "debug", "bad-name": "x", "PORT": "8080"}, BinaryData: map[string][]byte{"blob": []byte("b")},
		}},
		secrets: map[string]*corev1.Secret{"creds": {Data: map[string][]byte{"password": []byte("s3cret")}}},
		services: []corev1.Service{
			{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes"},
				Spec:       corev1.ServiceSpec{ClusterIP: "10.96.0.1", Ports: []corev1.ServicePort{{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP}}},
			},
			{
				ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "my-db"},
				Spec:       corev1.ServiceSpec{ClusterIP: "10.96.3.4", Ports: []corev1.ServicePort{{Port: 5432, Protocol: corev1.ProtocolTCP}}},
			},
			{
				ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "headless"},
				Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Port: 80}}},
			},
			{
				ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "elsewhere"},
				Spec:       corev1.ServiceSpec{ClusterIP: "10.96.9.9", Ports: []corev1.ServicePort{{Port: 80}}},
			},
		},
	}
}

// kubernetesEnv are the variables of the "kubernetes" Service.
var kubernetesEnv = []string{
	"KUBERNETES_SERVICE_HOST=10.96.0.1", "KUBERNETES_SERVICE_PORT=443", "KUBERNETES_SERVICE_PORT_HTTPS=443",
	"KUBERNETES_PORT=tcp://10.96.0.1:443", "KUBERNETES_PORT_443_TCP=tcp://10.96.0.1:443",
	"KUBERNETES_PORT_443_TCP_PROTO=tcp", "KUBERNETES_PORT_443_TCP_PORT=443", "KUBERNETES_PORT_443_TCP_ADDR=10.96.0.1",
}

// myDBEnv are the variables of the Service my-db of the pod's namespace.
var myDBEnv = []string{
	"MY_DB_SERVICE_HOST=10.96.3.4", "MY_DB_SERVICE_PORT=5432", "MY_DB_PORT=tcp://10.96.3.4:5432",
	"MY_DB_PORT_5432_TCP=tcp://10.96.3.4:5432", "MY_DB_PORT_5432_TCP_PROTO=tcp",
	"MY_DB_PORT_5432_TCP_PORT=5432", "MY_DB_PORT_5432_TCP_ADDR=10.96.3.4",
}

func fieldEnv(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
}

func TestContainerEnv(t *testing.T) {
	optional := new(true)
	image := Image{Env: []string{"PATH=/usr/bin", "LEVEL=info"}}
	for _, tc := range []struct {
		name  string
		links *bool
		c     corev1.Container
		// want are the variables after HOSTNAME and the image's, before the
		// Services'; wantErr a part of the error.
		want    []string
		wantErr string
	}{
		{
			name: "values and $(VAR) of earlier variables and Services",
			c: corev1.Container{Env: []corev1.EnvVar{
				{Name: "A", Value: "a"},
				{Name: "B", Value: "$(A)-$(LATER)-$$(A)"},
				{Name: "LATER", Value: "late"},
				{Name: "API", Value: "https://$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)"},
				{Name: "EMPTY"},
			}},
			want: []string{"A=a", "B=a-$(LATER)-$(A)", "LATER=late", "API=https://10.96.0.1:443", "EMPTY="},
		},
		{
			name: "fieldRef",
			c: corev1.Container{Env: []corev1.EnvVar{
				fieldEnv("NAME", "metadata.name"), fieldEnv("NS", "metadata.namespace"), fieldEnv("UID", "metadata.uid"),
				fieldEnv("APP", "metadata.labels['app']"), fieldEnv("NOTE", "metadata.annotations['note']"),
				fieldEnv("LABELS", "metadata.labels"), fieldEnv("NODE", "spec.nodeName"), fieldEnv("SA", "spec.serviceAccountName"),
				fieldEnv("IP", "status.podIP"), fieldEnv("IPS", "status.podIPs"), fieldEnv("HOST", "status.hostIP"),
				{Name: "SELF", Value: "$(NAME).$(NS)"},
			}},
			want: []string{"NAME=web-abcde", "NS=shop", "UID=uid-1", "APP=web", "NOTE=hi", "LABELS=app=\"web\"\ntier=\"front\"",
				"NODE=" + NodeName, "SA=web", "IP=198.18.0.3", "IPS=198.18.0.3", "HOST=198.18.0.1", "SELF=web-abcde.shop"},
		},
		{
			name:    "unknown fieldRef",
			c:       corev1.Container{Env: []corev1.EnvVar{fieldEnv("X", "spec.schedulerName")}},
			wantErr: `spec.containers[0].env[0] (X): fieldRef "spec.schedulerName": not a field the harness knows`,
		},
		{
			name: "configMapKeyRef and secretKeyRef, optional ones left out",
			c: corev1.Container{Env: []corev1.EnvVar{
				{Name: "LEVEL", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}, Key: "level"}}},
				{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "password"}}},
				{Name: "NO_KEY", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}, Key: "nope", Optional: optional}}},
				{Name: "NO_OBJECT", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}, Key: "k", Optional: optional}}},
			}},
			want: []string{"LEVEL=debug", "PASSWORD=s3cret"},
		},
		{
			name:    "missing key",
			c:       corev1.Container{Env: []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}, Key: "nope"}}}}},
			wantErr: `spec.containers[0].env[0] (X): key "nope" not found in configMap "conf"`,
		},
		{
			name:    "missing Secret",
			c:       corev1.Container{Env: []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}, Key: "k"}}}}},
			wantErr: `spec.containers[0].env[0] (X): secret "nope" not found`,
		},
		{
			name:    "resourceFieldRef",
			c:       corev1.Container{Env: []corev1.EnvVar{{Name: "CPU", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}}}},
			wantErr: "spec.containers[0].env[0] (CPU): valueFrom.resourceFieldRef: not supported by the harness",
		},
		{
			name: "envFrom with a prefix, env wins",
			c: corev1.Container{
				EnvFrom: []corev1.EnvFromSource{
					{Prefix: "C_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}}},
					{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}, Optional: optional}},
				},
				Env: []corev1.EnvVar{{Name: "C_PORT", Value: "9090"}},
			},
			want: []string{"C_PORT=9090", "C_bad-name=x", "C_blob=b", "C_level=debug"},
		},
		{
			name:    "envFrom a missing ConfigMap",
			c:       corev1.Container{EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}}}}},
			wantErr: `spec.containers[0].envFrom[0]: configMap "nope" not found`,
		},
		{
			name: "a variable overrides a Service's and the image's",
			c:    corev1.Container{Env: []corev1.EnvVar{{Name: "KUBERNETES_SERVICE_PORT", Value: "6443"}, {Name: "LEVEL", Value: "warn"}}},
			want: []string{"KUBERNETES_SERVICE_PORT=6443", "LEVEL=warn"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := envPod()
			pod.Spec.EnableServiceLinks = tc.links
			env, _, err := containerEnv(pod, &tc.c, "spec.containers[0]", image, envInputs())
			if checkError(t, err, tc.wantErr) {
				return
			}
			want := append([]string{"HOSTNAME=web-abcde", "PATH=/usr/bin", "LEVEL=info"}, tc.want...)
			for _, kv := range append(slices.Concat(kubernetesEnv, myDBEnv), "HOME=/") {
				if !slices.ContainsFunc(want, func(w string) bool { return strings.SplitN(w, "=", 2)[0] == strings.SplitN(kv, "=", 2)[0] }) {
					want = append(want, kv)
				}
			}
			if !sameSet(env, overridden(want)) {
				t.Errorf("environment:\n got %q\nwant %q", env, overridden(want))
			}
		})
	}
}

// overridden keeps the last value of each name, in the order of first
// definition.
func overridden(env []string) []string {
	e := newEnviron()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		e.set(k, v)
	}
	return e.list()
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestServiceLinks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		links *bool
		want  []string
	}{
		{"on by default", nil, append(slices.Clone(kubernetesEnv), myDBEnv...)},
		{"off keeps the API server's", new(false), kubernetesEnv},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := envPod()
			pod.Spec.EnableServiceLinks = tc.links
			if got := serviceEnv(pod, envInputs().services).list(); !sameSet(got, tc.want) {
				t.Errorf("service variables:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestContainerArgv(t *testing.T) {
	image := Image{Entrypoint: []string{"/bin/server"}, Cmd: []string{"--port", "80"}}
	env := newEnviron()
	env.set("PORT", "8080")
	for _, tc := range []struct {
		name          string
		command, args []string
		image         Image
		want          []string
	}{
		{"image entrypoint and cmd", nil, nil, image, []string{"/bin/server", "--port", "80"}},
		{"args replace cmd", nil, []string{"--port", "$(PORT)"}, image, []string{"/bin/server", "--port", "8080"}},
		{"command drops cmd", []string{"/bin/other"}, nil, image, []string{"/bin/other"}},
		{"command and args", []string{"/bin/$(PORT)"}, []string{"$(NOPE)", "$$(PORT)"}, image, []string{"/bin/8080", "$(NOPE)", "$(PORT)"}},
		{"command without entrypoint", []string{"tool"}, []string{"x"}, Image{}, []string{"tool", "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := containerArgv(&corev1.Container{Command: tc.command, Args: tc.args}, "spec.containers[0]", tc.image, env)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("argv %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	_, err := containerArgv(&corev1.Container{Image: "x", Args: nil}, "spec.containers[2]", Image{}, env)
	if err == nil || !strings.Contains(err.Error(), `spec.containers[2]: no command, and image "x" has neither entrypoint nor cmd`) {
		t.Errorf("no command at all: %v", err)
	}
}
