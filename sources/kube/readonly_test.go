package kube_test

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
	"github.com/ramjet-dev/ramjet/sources"
	"github.com/ramjet-dev/ramjet/sources/ingress"
	"github.com/ramjet-dev/ramjet/sources/input"
	"github.com/ramjet-dev/ramjet/sources/offline"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// TestTranslationLeavesSnapshotUnchanged translates the input of every
// golden case (sources and annotation families) with wide options and
// checks that no object of the snapshot changed: a Watch's snapshots hold
// the informers' shared objects, which translation may only read.
func TestTranslationLeavesSnapshotUnchanged(t *testing.T) {
	paths, _ := filepath.Glob("../testdata/*.txtar")
	more, _ := filepath.Glob("../../annotations/*/testdata/*.txtar")
	paths = append(paths, more...)
	if len(paths) < 20 {
		t.Fatalf("found %d golden cases, want the project's", len(paths))
	}
	sel, err := registry.Select("all")
	if err != nil {
		t.Fatal(err)
	}
	base := &config.Server{Listeners: map[string]*config.Listener{"http": {Address: ":80"}, "https": {Address: ":443", TLS: &config.ListenerTLS{}}}}
	for _, path := range paths {
		name := strings.TrimSuffix(strings.TrimPrefix(path, "../"), ".txtar")
		t.Run(name, func(t *testing.T) {
			manifests, flags := caseSections(t, path)
			snap, _, err := offline.Read([]string{"-"}, strings.NewReader(manifests))
			if err != nil {
				t.Fatal(err)
			}
			for _, crossNamespace := range []bool{false, true} {
				opts := sources.Options{
					Inputs: []input.Input{&ingress.Input{Options: ingress.Options{IngressClass: ingress.DefaultIngressClass,
						ControllerClass: ingress.DefaultControllerClass, WatchWithoutClass: true, AllowExternalName: true, Annotations: sel}}},
					DefaultBackend: flagValue(flags, "--default-backend"), HTTPSListener: "https", AllowExternalName: true,
				}
				opts.Core.CrossNamespacePaths = crossNamespace
				for k, s := range snap.Secrets {
					if s.Type == corev1.SecretTypeTLS {
						opts.DefaultSSLCertificate = k.String()
					}
				}
				before, ingresses := copySnapshot(snap), slices.Clone(snap.Ingresses)
				sources.Translate(snap, base, opts)
				checkUnchanged(t, before, ingresses, snap)
			}
		})
	}
}

// caseSections returns the input.yaml and flags sections of a golden case.
func caseSections(t *testing.T, path string) (input, flags string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]*strings.Builder{}
	var current *strings.Builder
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if trimmed := strings.TrimSpace(line); strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			current = &strings.Builder{}
			sections[trimmed[3:len(trimmed)-3]] = current
			continue
		}
		if current != nil {
			current.WriteString(line)
		}
	}
	if sections["input.yaml"] == nil {
		t.Fatal("no input.yaml section")
	}
	if sections["flags"] != nil {
		flags = sections["flags"].String()
	}
	return sections["input.yaml"].String(), flags
}

// flagValue returns the value of a "--name value" flag.
func flagValue(flags, name string) string {
	fields := strings.Fields(flags)
	for i, f := range fields {
		if f == name && i+1 < len(fields) {
			return fields[i+1]
		}
	}
	return ""
}

// objectCopy is an object of a snapshot and a deep copy of it.
type objectCopy struct{ obj, copy runtime.Object }

// copySnapshot returns every object of a snapshot with a deep copy.

func copySnapshot(s *snapshot.Snapshot) []objectCopy {
	var out []objectCopy
	add := func(o runtime.Object) { out = append(out, objectCopy{o, o.DeepCopyObject()}) }
	for _, o := range s.IngressClasses {
		add(o)
	}
	for _, o := range s.Ingresses {
		add(o)
	}
	for _, o := range s.Services {
		add(o)
	}
	for _, list := range s.EndpointSlices {
		for _, o := range list {
			add(o)
		}
	}
	for _, o := range s.Secrets {
		add(o)
	}
	return out
}

func checkUnchanged(t *testing.T, before []objectCopy, ingresses []*networkingv1.Ingress, s *snapshot.Snapshot) {
	t.Helper()
	for _, b := range before {
		if !reflect.DeepEqual(b.obj, b.copy) {
			m := b.obj.(metav1.Object) // named only: a Secret's data is never printed
			t.Errorf("translation changed %T %s/%s", b.obj, m.GetNamespace(), m.GetName())
		}
	}
	if n := len(copySnapshot(s)); n != len(before) {
		t.Errorf("the snapshot holds %d objects after translation, %d before", n, len(before))
	}
	if !slices.Equal(ingresses, s.Ingresses) {
		t.Error("translation changed the list of Ingresses")
	}
}
