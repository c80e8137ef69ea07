// Package offline is `ramjet-ingress translate`: it reads Kubernetes
// manifests (as `kubectl get -o yaml` prints them, or as they sit in a
// repository), builds a snapshot of them, and reports what Ramjet would
// serve. It is the migration check a user runs before switching a class.
package offline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	networkingv1beta1 "k8s.io/api/networking/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// maxManifestBytes bounds one manifest file or stdin.
const maxManifestBytes = 256 << 20

// Notes are what Read has to say about the input besides its objects, each
// line naming the file and the document.
type Notes struct {
	// Warnings change nothing that is translated: an old Ingress version
	// read as networking.k8s.io/v1, a document that is not a Kubernetes
	// object, an object of a kind translation does not read that does not
	// decode.
	Warnings []string
	// Unreadable are the documents that could not be read: one that is not
	// YAML or JSON, or an object of a kind translation reads (Ingress,
	// IngressClass, Service, EndpointSlice, Secret) that does not decode,
	// such as an annotation value written as a number. What they hold is
	// not translated, so `translate --check` fails.
	Unreadable []string
}

// Read builds a snapshot from manifest paths: files, folders (their .yaml,
// .yml and .json files, recursively) and "-" for stdin. Documents may be
// multi-document YAML, JSON, or List objects. Objects of kinds translation
// does not use are skipped; problems with a document are notes naming the
// file and the document, and do not stop the reading.
func Read(paths []string, stdin io.Reader) (*snapshot.Snapshot, Notes, error) {
	r := &reader{snap: snapshot.New()}
	for _, p := range paths {
		if err := r.path(p, stdin); err != nil {
			return nil, r.notes, err
		}
	}
	r.snap.Sort()
	return r.snap, r.notes, nil
}

type reader struct {
	snap  *snapshot.Snapshot
	notes Notes
}

func (r *reader) path(p string, stdin io.Reader) error {
	if p == "-" {
		return r.stream("stdin", stdin)
	}
	info, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return r.file(p)
	}
	var files []string
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml", ".json":
			if !d.IsDir() {
				files = append(files, path)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	slices.Sort(files)
	for _, f := range files {
		if err := r.file(f); err != nil {
			return err
		}
	}
	return nil
}

func (r *reader) file(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return r.stream(path, f)
}

// stream reads the documents of one file.
func (r *reader) stream(name string, in io.Reader) error {
	docs := utilyaml.NewYAMLReader(bufio.NewReader(io.LimitReader(in, maxManifestBytes)))
	for i := 1; ; i++ {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		r.document(fmt.Sprintf("%s document %d", name, i), doc)
	}
}

// document decodes one document, a List's items included.
func (r *reader) document(where string, doc []byte) {
	jsonDoc, err := utilyaml.ToJSON(doc)
	if err != nil {
		r.unreadable(where, "not YAML or JSON (%v); whatever it holds is not translated", err)
		return
	}
	var u unstructured.Unstructured
	if err := u.UnmarshalJSON(jsonDoc); err != nil {
		r.warn(where, "not a Kubernetes object: %v", err)
		return
	}
	if u.IsList() {
		list, err := u.ToList()
		if err != nil {
			r.unreadable(where, "a List that does not parse (%v); its items are not translated", err)
			return
		}
		for i := range list.Items {
			item, _ := list.Items[i].MarshalJSON()
			r.object(fmt.Sprintf("%s item %d", where, i+1), &list.Items[i], item)
		}
		return
	}
	r.object(where, &u, jsonDoc)
}

// decoder decodes the kinds of client-go's scheme and the Gateway API's
// v1 kinds.
var decoder = func() runtime.Decoder {
	s := runtime.NewScheme()
	utilruntime.Must(scheme.AddToScheme(s))
	utilruntime.Must(gatewayv1.Install(s))
	return serializer.NewCodecFactory(s).UniversalDeserializer()
}()

// object decodes one object (u is its untyped form) into its typed form
// and adds it.
func (r *reader) object(where string, u *unstructured.Unstructured, data []byte) {
	obj, gvk, err := decoder.Decode(data, nil, nil)
	if err != nil {
		switch {
		case runtime.IsNotRegisteredError(err):
			// a kind translation does not use
		case readKinds[u.GetKind()]:
			r.unreadable(where, "%s does not decode: %s; it is not translated", objectName(u), decodeProblem(u, err))
		default:
			r.warn(where, "%s does not decode: %s", objectName(u), decodeProblem(u, err))
		}
		return
	}
	if gvk.Group == "networking.k8s.io" && gvk.Version == "v1beta1" || gvk.Group == "extensions" && gvk.Version == "v1beta1" {
		if gvk.Kind != "Ingress" {
			return
		}
		ing, err := fromV1beta1(data)
		if err != nil {
			r.unreadable(where, "%s (%s) does not decode: %s; it is not translated", objectName(u), gvk.GroupVersion(), decodeProblem(u, err))
			return
		}
		r.warn(where, "%s is %s, which Kubernetes no longer serves; it is read as networking.k8s.io/v1", objectName(u), gvk.GroupVersion())
		obj = ing
	}
	if sec, ok := obj.(*corev1.Secret); ok {
		mergeStringData(sec)
	}
	if m, ok := obj.(interface{ GetNamespace() string }); ok && m.GetNamespace() == "" {
		if s, ok := obj.(interface{ SetNamespace(string) }); ok && needsNamespace(obj) {
			s.SetNamespace("default")
		}
	}
	r.snap.Add(obj)
}

// mergeStringData does what the API server does with a Secret's
// stringData, which manifests in repositories often use: its keys go into
// data, over data's own.
func mergeStringData(sec *corev1.Secret) {
	if len(sec.StringData) == 0 {
		return
	}
	if sec.Data == nil {
		sec.Data = map[string][]byte{}
	}
	for k, v := range sec.StringData {
		sec.Data[k] = []byte(v)
	}
	sec.StringData = nil
}

// needsNamespace reports whether an object is namespaced (manifests in a
// repository often leave the namespace to kubectl's default).
func needsNamespace(obj runtime.Object) bool {
	_, cluster := obj.(*networkingv1.IngressClass)
	return !cluster
}

func (r *reader) warn(where, format string, args ...any) {
	r.notes.Warnings = append(r.notes.Warnings, where+": "+fmt.Sprintf(format, args...))
}

func (r *reader) unreadable(where, format string, args ...any) {
	r.notes.Unreadable = append(r.notes.Unreadable, where+": "+fmt.Sprintf(format, args...))
}

// fromV1beta1 converts a v1beta1 Ingress (networking.k8s.io or
// extensions, which share their shape) to networking.k8s.io/v1.
func fromV1beta1(data []byte) (*networkingv1.Ingress, error) {
	var old networkingv1beta1.Ingress
	if err := json.Unmarshal(data, &old); err != nil {
		return nil, err
	}
	ing := &networkingv1.Ingress{ObjectMeta: old.ObjectMeta}
	ing.Spec.IngressClassName = old.Spec.IngressClassName
	ing.Spec.DefaultBackend = backendV1(old.Spec.Backend)
	for _, t := range old.Spec.TLS {
		ing.Spec.TLS = append(ing.Spec.TLS, networkingv1.IngressTLS{Hosts: t.Hosts, SecretName: t.SecretName})
	}
	for _, rule := range old.Spec.Rules {
		nr := networkingv1.IngressRule{Host: rule.Host}
		if rule.HTTP != nil {
			nr.HTTP = &networkingv1.HTTPIngressRuleValue{}
			for _, p := range rule.HTTP.Paths {
				var pt *networkingv1.PathType
				if p.PathType != nil {
					t := networkingv1.PathType(*p.PathType)
					pt = &t
				}
				nr.HTTP.Paths = append(nr.HTTP.Paths, networkingv1.HTTPIngressPath{Path: p.Path, PathType: pt, Backend: *backendV1(&p.Backend)})
			}
		}
		ing.Spec.Rules = append(ing.Spec.Rules, nr)
	}
	return ing, nil
}

func backendV1(b *networkingv1beta1.IngressBackend) *networkingv1.IngressBackend {
	if b == nil {
		return nil
	}
	if b.Resource != nil {
		return &networkingv1.IngressBackend{Resource: b.Resource}
	}
	port := networkingv1.ServiceBackendPort{Number: b.ServicePort.IntVal}
	if b.ServicePort.Type == intstr.String {
		port = networkingv1.ServiceBackendPort{Name: b.ServicePort.StrVal}
	}
	return &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: b.ServiceName, Port: port}}
}
