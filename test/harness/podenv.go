package harness

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podInputs are the API objects a pod's environment and volumes read,
// fetched once before its containers start.
type podInputs struct {
	// configMaps and secrets are the pod's namespace's, by name; a name
	// missing from the map does not exist.
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
	// services are the Services of the pod's namespace and the default
	// namespace's "kubernetes", for the variables kubelet injects.
	services []corev1.Service
}

// environ is an ordered environment: a name keeps the place where it was
// first set and the value it was last set to.
type environ struct {
	names  []string
	values map[string]string
}

func newEnviron() *environ { return &environ{values: map[string]string{}} }

func (e *environ) set(name, value string) {
	if _, ok := e.values[name]; !ok {
		e.names = append(e.names, name)
	}
	e.values[name] = value
}

func (e *environ) lookup(name string) (string, bool) {
	v, ok := e.values[name]
	return v, ok
}

// list returns the environment as NAME=value strings.
func (e *environ) list() []string {
	out := make([]string, len(e.names))
	for i, n := range e.names {
		out[i] = n + "=" + e.values[n]
	}
	return out
}

// containerEnv returns the environment of container c (at field, e.g.
// "spec.containers[1]") as kubelet and the container runtime build it:
// HOSTNAME, then the image's variables, overridden by kubelet's (service
// variables, envFrom, env), and HOME "/" when none of them set it (the
// runtime's home of a user the image's /etc/passwd does not name; the
// harness's images have none). It also returns kubelet's variables alone,
// which $(VAR) in the command and args refers to.
func containerEnv(pod *corev1.Pod, c *corev1.Container, field string, img Image, in *podInputs) (env []string, kubelet *environ, err error) {
	kubelet, err = kubeletEnv(pod, c, field, in)
	if err != nil {
		return nil, nil, err
	}
	all := newEnviron()
	all.set("HOSTNAME", podHostname(pod))
	for _, kv := range img.Env {
		name, value, _ := strings.Cut(kv, "=")
		all.set(name, value)
	}
	for _, name := range kubelet.names {
		all.set(name, kubelet.values[name])
	}
	if _, ok := all.lookup("HOME"); !ok {
		all.set("HOME", "/")
	}
	return all.list(), kubelet, nil
}

// kubeletEnv returns the variables kubelet gives container c: those of the
// Services (the default namespace's "kubernetes" always, the pod's
// namespace's unless enableServiceLinks is false), then envFrom and env in
// order, which win over the Services'. An env value expands $(VAR) with
// the variables defined before it.
func kubeletEnv(pod *corev1.Pod, c *corev1.Container, field string, in *podInputs) (*environ, error) {
	services := serviceEnv(pod, in.services)
	defined := newEnviron()
	lookup := func(name string) (string, bool) {
		if v, ok := defined.lookup(name); ok {
			return v, true
		}
		return services.lookup(name)
	}
	for i, from := range c.EnvFrom {
		if err := addEnvFrom(defined, from, in); err != nil {
			return nil, fmt.Errorf("%s.envFrom[%d]: %w", field, i, err)
		}
	}
	for i, v := range c.Env {
		value, ok, err := envValue(pod, v, lookup, in)
		if err != nil {
			return nil, fmt.Errorf("%s.env[%d] (%s): %w", field, i, v.Name, err)
		}
		if ok {
			defined.set(v.Name, value)
		}
	}
	for _, name := range services.names {
		if _, ok := defined.lookup(name); !ok {
			defined.set(name, services.values[name])
		}
	}
	return defined, nil
}

// envValue returns the value of one env entry, or ok false when it names
// an optional key that does not exist (kubelet leaves the variable out).
func envValue(pod *corev1.Pod, v corev1.EnvVar, lookup func(string) (string, bool), in *podInputs) (value string, ok bool, err error) {
	from := v.ValueFrom
	switch {
	case v.Value != "" || from == nil:
		return expand(v.Value, lookup), true, nil
	case from.FieldRef != nil:
		value, err := podField(pod, from.FieldRef.FieldPath)
		return value, err == nil, err
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		return keyValue("configMap", ref.Name, ref.Key, ref.Optional, configMapData(in.configMaps[ref.Name]))
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		return keyValue("secret", ref.Name, ref.Key, ref.Optional, secretData(in.secrets[ref.Name]))
	case from.ResourceFieldRef != nil:
		return "", false, fmt.Errorf("valueFrom.resourceFieldRef: not supported by the harness (it enforces no resources)")
	default:
		return "", false, fmt.Errorf("valueFrom: only fieldRef, configMapKeyRef and secretKeyRef are supported by the harness")
	}
}

// keyValue returns data[key] of the object kind/name (data nil: the object
// does not exist), or ok false when it is missing and optional.
func keyValue(kind, name, key string, optional *bool, data map[string][]byte) (string, bool, error) {
	value, found := data[key]
	switch {
	case found:
		return string(value), true, nil
	case optional != nil && *optional:
		return "", false, nil
	case data == nil:
		return "", false, fmt.Errorf("%s %q not found", kind, name)
	default:
		return "", false, fmt.Errorf("key %q not found in %s %q", key, kind, name)
	}
}

// addEnvFrom adds the keys of a ConfigMap or Secret, with the prefix (the
// names kubelet would leave out, since relaxed variable names, cannot be
// keys the API server accepts).
func addEnvFrom(env *environ, from corev1.EnvFromSource, in *podInputs) error {
	var data map[string][]byte
	var kind, name string
	var optional *bool
	switch {
	case from.ConfigMapRef != nil:
		kind, name, optional = "configMap", from.ConfigMapRef.Name, from.ConfigMapRef.Optional
		data = configMapData(in.configMaps[name])
	case from.SecretRef != nil:
		kind, name, optional = "secret", from.SecretRef.Name, from.SecretRef.Optional
		data = secretData(in.secrets[name])
	default:
		return fmt.Errorf("only configMapRef and secretRef are supported by the harness")
	}
	if data == nil {
		if optional != nil && *optional {
			return nil
		}
		return fmt.Errorf("%s %q not found", kind, name)
	}
	for _, key := range slices.Sorted(maps.Keys(data)) {
		env.set(from.Prefix+key, string(data[key]))
	}
	return nil
}

// configMapData returns the data and binary data of cm, nil when cm is nil.
func configMapData(cm *corev1.ConfigMap) map[string][]byte {
	if cm == nil {
		return nil
	}
	data := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	maps.Copy(data, cm.BinaryData)
	return data
}

// secretData returns the data of s, nil when s is nil.
func secretData(s *corev1.Secret) map[string][]byte {
	if s == nil {
		return nil
	}
	data := make(map[string][]byte, len(s.Data)+len(s.StringData))
	maps.Copy(data, s.Data)
	for k, v := range s.StringData {
		data[k] = []byte(v)
	}
	return data
}

// podField returns the value of a downward API field path of pod (for
// env fieldRef and downwardAPI volumes).
func podField(pod *corev1.Pod, path string) (string, error) {
	if key, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[key], nil
	}
	if key, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[key], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP":
		return pod.Status.HostIP, nil
	case "status.hostIPs":
		return joinIPs(pod.Status.HostIPs), nil
	case "status.podIP":
		return pod.Status.PodIP, nil
	case "status.podIPs":
		ips := make([]corev1.HostIP, len(pod.Status.PodIPs))
		for i, ip := range pod.Status.PodIPs {
			ips[i] = corev1.HostIP(ip)
		}
		return joinIPs(ips), nil
	}
	return "", fmt.Errorf("fieldRef %q: not a field the harness knows", path)
}

// subscript returns k of "prefix['k']".
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok || !strings.HasSuffix(rest, "']") {
		return "", false
	}
	return strings.TrimSuffix(rest, "']"), true
}

// formatMap renders labels or annotations as the downward API does: one
// key="value" a line, sorted by key.
func formatMap(m map[string]string) string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s=%s", k, strconv.Quote(m[k]))
	}
	return b.String()
}

func joinIPs(ips []corev1.HostIP) string {
	s := make([]string, len(ips))
	for i, ip := range ips {
		s[i] = ip.IP
	}
	return strings.Join(s, ",")
}

// serviceEnv returns the variables kubelet derives from Services: for the
// default namespace's "kubernetes" always, for the pod's namespace's
// unless the pod disables service links; Services without a cluster IP
// give none.
func serviceEnv(pod *corev1.Pod, services []corev1.Service) *environ {
	links := pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks
	chosen := map[string]corev1.Service{}
	for _, s := range services {
		master := s.Namespace == metav1.NamespaceDefault && s.Name == "kubernetes"
		if _, taken := chosen[s.Name]; master && !taken || s.Namespace == pod.Namespace && links {
			chosen[s.Name] = s
		}
	}
	env := newEnviron()
	for _, name := range slices.Sorted(maps.Keys(chosen)) {
		addServiceVars(env, chosen[name])
	}
	return env
}

// addServiceVars adds NAME_SERVICE_HOST, NAME_SERVICE_PORT(_PORTNAME) and
// the Docker link variables NAME_PORT(_N_PROTO(_...)) of s.
func addServiceVars(env *environ, s corev1.Service) {
	ip := s.Spec.ClusterIP
	if ip == "" || ip == corev1.ClusterIPNone || len(s.Spec.Ports) == 0 {
		return
	}
	prefix := strings.ToUpper(strings.ReplaceAll(s.Name, "-", "_"))
	env.set(prefix+"_SERVICE_HOST", ip)
	env.set(prefix+"_SERVICE_PORT", strconv.Itoa(int(s.Spec.Ports[0].Port)))
	for _, p := range s.Spec.Ports {
		if p.Name != "" {
			env.set(prefix+"_SERVICE_PORT_"+strings.ToUpper(strings.ReplaceAll(p.Name, "-", "_")), strconv.Itoa(int(p.Port)))
		}
	}
	for i, p := range s.Spec.Ports {
		proto := strings.ToLower(string(p.Protocol))
		if proto == "" {
			proto = "tcp"
		}
		port := strconv.Itoa(int(p.Port))
		url := proto + "://" + net.JoinHostPort(ip, port)
		if i == 0 {
			env.set(prefix+"_PORT", url)
		}
		link := prefix + "_PORT_" + port + "_" + strings.ToUpper(proto)
		env.set(link, url)
		env.set(link+"_PROTO", proto)
		env.set(link+"_PORT", port)
		env.set(link+"_ADDR", ip)
	}
}

// podHostname is the host name of the pod's containers: spec.hostname,
// else the pod's name cut at 63 characters.
func podHostname(pod *corev1.Pod) string {
	if pod.Spec.Hostname != "" {
		return pod.Spec.Hostname
	}
	return strings.TrimRight(pod.Name[:min(len(pod.Name), 63)], "-.")
}

// expand replaces each $(NAME) of s by its value, as kubelet expands env
// values, command and args: a name that lookup does not know stays
// $(NAME) as written, $$ is a literal $, and any other $ stays.
func expand(s string, lookup func(string) (string, bool)) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// containerArgv returns the program and arguments container c runs, as
// kubelet and the runtime choose them: command (else the image's
// entrypoint) followed by args (else, without command, the image's cmd),
// with $(VAR) expanded from kubelet's variables.
func containerArgv(c *corev1.Container, field string, img Image, env *environ) ([]string, error) {
	var argv []string
	switch {
	case len(c.Command) > 0:
		argv = append(expandAll(c.Command, env), expandAll(c.Args, env)...)
	case len(c.Args) > 0:
		argv = append(slices.Clone(img.Entrypoint), expandAll(c.Args, env)...)
	default:
		argv = append(slices.Clone(img.Entrypoint), img.Cmd...)
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("%s: no command, and image %q has neither entrypoint nor cmd", field, c.Image)
	}
	return argv, nil
}

func expandAll(args []string, env *environ) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = expand(a, env.lookup)
	}
	return out
}
