package harness

import (
	"context"
	"fmt"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Kinds of Workload.
const (
	KindDeployment = "Deployment"
	KindDaemonSet  = "DaemonSet"
)

// rootCAConfigMap is the ConfigMap kube-controller-manager publishes in
// every namespace with the cluster's CA, key rootCAKey.
const (
	rootCAConfigMap = "kube-root-ca.crt"
	rootCAKey       = "ca.crt"
)

// Workload names a Deployment or DaemonSet whose pod RunPod runs.
type Workload struct {
	// Kind is KindDeployment or KindDaemonSet.
	Kind            string
	Namespace, Name string
}

// Deployment returns the Workload of the Deployment namespace/name.
func Deployment(namespace, name string) Workload {
	return Workload{Kind: KindDeployment, Namespace: namespace, Name: name}
}

// DaemonSet returns the Workload of the DaemonSet namespace/name.
func DaemonSet(namespace, name string) Workload {
	return Workload{Kind: KindDaemonSet, Namespace: namespace, Name: name}
}

// String returns "Kind namespace/name".
func (w Workload) String() string { return w.Kind + " " + w.Namespace + "/" + w.Name }

// pod reads the workload and returns the Pod to create from its template.
func (w Workload) pod(ctx context.Context, client kubernetes.Interface) (*corev1.Pod, error) {
	var meta metav1.ObjectMeta
	var template corev1.PodTemplateSpec
	switch w.Kind {
	case KindDeployment:
		d, err := client.AppsV1().Deployments(w.Namespace).Get(ctx, w.Name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", w, err)
		}
		meta, template = d.ObjectMeta, d.Spec.Template
	case KindDaemonSet:
		d, err := client.AppsV1().DaemonSets(w.Namespace).Get(ctx, w.Name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", w, err)
		}
		meta, template = d.ObjectMeta, d.Spec.Template
	default:
		return nil, fmt.Errorf("workload kind %q: want %s or %s", w.Kind, KindDeployment, KindDaemonSet)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:    w.Namespace,
			GenerateName: w.Name + "-",
			Labels:       template.Labels,
			Annotations:  template.Annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: w.Kind, Name: meta.Name, UID: meta.UID,
				Controller: new(true), BlockOwnerDeletion: new(true),
			}},
		},
		Spec: template.Spec,
	}
	pod.Spec.NodeName = NodeName
	return pod, nil
}

// publishNamespaceDefaults does for the namespace what
// kube-controller-manager would: publish the cluster's CA as the
// ConfigMap kube-root-ca.crt, and create the ServiceAccount "default".
func publishNamespaceDefaults(ctx context.Context, c *Cluster, namespace string) error {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: rootCAConfigMap,
			Annotations: map[string]string{"kubernetes.io/description": "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."},
		},
		Data: map[string]string{rootCAKey: string(c.Config.CAData)},
	}
	configMaps := c.Client.CoreV1().ConfigMaps(namespace)
	_, err := configMaps.Create(ctx, cm, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = configMaps.Update(ctx, cm, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("publishing %s in namespace %s: %w", rootCAConfigMap, namespace, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "default"}}
	if _, err := c.Client.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the ServiceAccount default in namespace %s: %w", namespace, err)
	}
	return nil
}

// fetchInputs reads the ConfigMaps and Secrets the pod names (those that
// do not exist are left out) and the Services whose variables kubelet
// injects.
func fetchInputs(ctx context.Context, client kubernetes.Interface, pod *corev1.Pod) (*podInputs, error) {
	configMaps, secrets := referencedObjects(pod)
	var err error
	in := &podInputs{}
	if in.configMaps, err = getExisting(ctx, "ConfigMap", configMaps, client.CoreV1().ConfigMaps(pod.Namespace).Get); err != nil {
		return nil, err
	}
	if in.secrets, err = getExisting(ctx, "Secret", secrets, client.CoreV1().Secrets(pod.Namespace).Get); err != nil {
		return nil, err
	}
	namespaces := []string{pod.Namespace}
	if pod.Namespace != metav1.NamespaceDefault {
		namespaces = append(namespaces, metav1.NamespaceDefault) // for its "kubernetes"
	}
	for _, ns := range namespaces {
		list, err := client.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing the Services of namespace %s: %w", ns, err)
		}
		in.services = append(in.services, list.Items...)
	}
	return in, nil
}

// getExisting reads the objects of kind named names with get, leaving out
// those that do not exist.
func getExisting[T any](ctx context.Context, kind string, names []string, get func(context.Context, string, metav1.GetOptions) (T, error)) (map[string]T, error) {
	found := map[string]T{}
	for _, name := range names {
		obj, err := get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s %s: %w", kind, name, err)
		}
		found[name] = obj
	}
	return found, nil
}

// referencedObjects returns the names of the ConfigMaps and Secrets that
// the pod's volumes and its containers' env and envFrom name.
func referencedObjects(pod *corev1.Pod) (configMaps, secrets []string) {
	seen := map[string]bool{}
	add := func(list *[]string, kind, name string) {
		if !seen[kind+"/"+name] {
			seen[kind+"/"+name] = true
			*list = append(*list, name)
		}
	}
	for _, v := range pod.Spec.Volumes {
		switch s := v.VolumeSource; {
		case s.ConfigMap != nil:
			add(&configMaps, kindConfigMap, s.ConfigMap.Name)
		case s.Secret != nil:
			add(&secrets, kindSecret, s.Secret.SecretName)
		case s.Projected != nil:
			for _, src := range s.Projected.Sources {
				if src.ConfigMap != nil {
					add(&configMaps, kindConfigMap, src.ConfigMap.Name)
				}
				if src.Secret != nil {
					add(&secrets, kindSecret, src.Secret.Name)
				}
			}
		}
	}
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		for _, from := range c.EnvFrom {
			if from.ConfigMapRef != nil {
				add(&configMaps, kindConfigMap, from.ConfigMapRef.Name)
			}
			if from.SecretRef != nil {
				add(&secrets, kindSecret, from.SecretRef.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
				add(&configMaps, kindConfigMap, e.ValueFrom.ConfigMapKeyRef.Name)
			}
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				add(&secrets, kindSecret, e.ValueFrom.SecretKeyRef.Name)
			}
		}
	}
	return configMaps, secrets
}

// token returns a token of the pod's ServiceAccount from the TokenRequest
// API, bound to the Pod (it stops working when the Pod is deleted), as
// kubelet asks for one.
func (p *Pod) token(ctx context.Context, audience string, expiration int64) (string, error) {
	var audiences []string
	if audience != "" {
		audiences = []string{audience}
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences:         audiences,
		ExpirationSeconds: &expiration,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID},
	}}
	sa := p.obj.Spec.ServiceAccountName
	resp, err := p.client.CoreV1().ServiceAccounts(p.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token of ServiceAccount %s: %w", sa, err)
	}
	return resp.Status.Token, nil
}
