package kube

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	metafake "k8s.io/client-go/metadata/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/sources/ingress"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// fakeEnv is a Watch over fake clients: the typed client answers the
// Secrets' GETs, the metadata client feeds the Secrets' metadata informer.
// A test keeps the two in step, as an API server would.
type fakeEnv struct {
	t      *testing.T
	ctx    context.Context
	client *fake.Clientset
	meta   *metafake.FakeMetadataClient
	w      *Watch
	// signals counts the Secret events that signalled a change.
	signals atomic.Int32
	// failGets makes every GET of a Secret fail.
	failGets atomic.Bool
}

func newFakeEnv(t *testing.T, opts Options) *fakeEnv {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	// The IngressClasses: Ramjet's (tlsIngress uses it) and ingress-nginx's.
	e := &fakeEnv{t: t, meta: metafake.NewSimpleMetadataClient(scheme), client: fake.NewClientset(
		&networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "ramjet"}, Spec: networkingv1.IngressClassSpec{Controller: ingress.DefaultControllerClass}},
		&networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"}},
	)}
	e.client.PrependReactor("get", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
		if e.failGets.Load() {
			return true, nil, errors.New("connection refused")
		}
		return false, nil, nil
	})
	w, err := NewWatch(Clients{Kube: e.client, Metadata: e.meta}, withIngressInput(opts))
	if err != nil {
		t.Fatal(err)
	}
	e.w = w
	signal := e.w.secrets.signal
	e.w.secrets.signal = func() { e.signals.Add(1); signal() }
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); e.w.Wait() })
	e.ctx = ctx
	e.w.Start(ctx)
	syncCtx, done := context.WithTimeout(ctx, 10*time.Second)
	defer done()
	if err := e.w.WaitForSync(syncCtx); err != nil {
		t.Fatal(err)
	}
	return e
}

// putSecret creates or updates a Secret in both clients with resourceVersion rv.
func (e *fakeEnv) putSecret(ns, name, rv, value string) {
	e.t.Helper()
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv}, Data: map[string][]byte{"k": []byte(value)}}
	if _, err := e.client.CoreV1().Secrets(ns).Update(e.ctx, sec, metav1.UpdateOptions{}); err != nil {
		if _, err := e.client.CoreV1().Secrets(ns).Create(e.ctx, sec, metav1.CreateOptions{}); err != nil {
			e.t.Fatal(err)
		}
	}
	e.putMeta(ns, name, rv)
}

// putMeta creates or updates only the metadata of a Secret.
func (e *fakeEnv) putMeta(ns, name, rv string) {
	e.t.Helper()
	m := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv}}
	c := e.meta.Resource(secretKind.resource).Namespace(ns).(metafake.MetadataClient)
	if _, err := c.UpdateFake(m, metav1.UpdateOptions{}); err != nil {
		if _, err := c.CreateFake(m, metav1.CreateOptions{}); err != nil {
			e.t.Fatal(err)
		}
	}
	e.eventually("metadata of "+ns+"/"+name+" at "+rv, func() bool {
		obj, ok, _ := e.w.secrets.source(snapshot.Key{Namespace: ns, Name: name}).informer.GetIndexer().GetByKey(ns + "/" + name)
		return ok && obj.(metav1.Object).GetResourceVersion() == rv
	})
}

func (e *fakeEnv) deleteMeta(ns, name string) {
	e.t.Helper()
	if err := e.meta.Resource(secretKind.resource).Namespace(ns).Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.eventually("metadata of "+ns+"/"+name+" deleted", func() bool {
		_, ok, _ := e.w.secrets.source(snapshot.Key{Namespace: ns, Name: name}).informer.GetIndexer().GetByKey(ns + "/" + name)
		return !ok
	})
}

// ingresses is the cache of the Ingress informer.
func (e *fakeEnv) ingresses() cache.Store {
	e.t.Helper()
	for _, n := range e.w.watched {
		if strings.HasPrefix(n.name, string(snapshot.Ingresses)+" ") {
			return n.informer.GetStore()
		}
	}
	e.t.Fatal("no Ingress informer")
	return nil
}

func (e *fakeEnv) putIngress(ing *networkingv1.Ingress) {
	e.t.Helper()
	if _, err := e.client.NetworkingV1().Ingresses(ing.Namespace).Create(e.ctx, ing, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.eventually("Ingress "+ing.Name, func() bool {
		_, ok, _ := e.ingresses().GetByKey(ing.Namespace + "/" + ing.Name)
		return ok
	})
}

func (e *fakeEnv) deleteIngress(ns, name string) {
	e.t.Helper()
	if err := e.client.NetworkingV1().Ingresses(ns).Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.eventually("Ingress "+name+" deleted", func() bool {
		_, ok, _ := e.ingresses().GetByKey(ns + "/" + name)
		return !ok
	})
}

func (e *fakeEnv) eventually(what string, cond func() bool) {
	e.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// signalsOf runs change, then updates the referenced Secret a/name to rv
// and value, and returns the number of signals of both. Events of one
// informer are handled in order: once the referenced Secret has signalled,
// change has been handled.
func (e *fakeEnv) signalsOf(change func(), name, rv, value string) int32 {
	e.t.Helper()
	before := e.signals.Load()
	change()
	e.putSecret("a", name, rv, value)
	e.eventually("the signal of a/"+name, func() bool { return e.signals.Load() > before })
	return e.signals.Load() - before
}

// gets returns the number of GETs of the Secret a/name so far.
func (e *fakeEnv) gets(name string) int {
	n := 0
	for _, a := range e.client.Actions() {
		if g, ok := a.(k8stesting.GetAction); ok && a.GetResource().Resource == "secrets" && g.GetNamespace() == "a" && g.GetName() == name {
			n++
		}
	}
	return n
}

func (e *fakeEnv) wantGets(name string, want int) {
	e.t.Helper()
	if n := e.gets(name); n != want {
		e.t.Errorf("%d GETs of a/%s, want %d", n, name, want)
	}
}

// snapshot takes a snapshot and returns it with the "ns/name=value" of its Secrets.
func (e *fakeEnv) snapshot() (*snapshot.Snapshot, []string, error) {
	e.t.Helper()
	snap, err := e.w.Snapshot(e.ctx)
	var got []string
	for k, s := range snap.Secrets {
		got = append(got, k.String()+"="+string(s.Data["k"]))
	}
	slices.Sort(got)
	return snap, got, err
}

func (e *fakeEnv) wantSecrets(want ...string) {
	e.t.Helper()
	_, got, err := e.snapshot()
	if err != nil {
		e.t.Fatalf("Snapshot: %v", err)
	}
	if !slices.Equal(got, want) {
		e.t.Fatalf("Secrets %q, want %q", got, want)
	}
}

// tlsIngress is an Ingress of Ramjet's class with these TLS Secrets.
func tlsIngress(ns, name string, secrets ...string) *networkingv1.Ingress {
	class := "ramjet"
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: networkingv1.IngressSpec{IngressClassName: &class}}
	for _, s := range secrets {
		ing.Spec.TLS = append(ing.Spec.TLS, networkingv1.IngressTLS{Hosts: []string{"a.example"}, SecretName: s})
	}
	return ing
}

func TestSecretCache(t *testing.T) {
	e := newFakeEnv(t, Options{})
	e.putSecret("a", "tls", "10", "one")
	e.putSecret("a", "other", "11", "unrelated")
	e.putIngress(tlsIngress("a", "web", "tls"))

	t.Run("fetched on first reference", func(t *testing.T) {
		e.wantSecrets("a/tls=one")
		e.wantGets("tls", 1)
		e.wantGets("other", 0)
	})
	t.Run("cached while unchanged", func(t *testing.T) {
		e.wantSecrets("a/tls=one")
		e.wantGets("tls", 1)
	})
	t.Run("an unreferenced Secret does not signal", func(t *testing.T) {
		if n := e.signalsOf(func() { e.putMeta("a", "other", "12") }, "tls", "13", "two"); n != 1 {
			t.Errorf("%d signals, want 1 (a/tls only)", n)
		}
	})
	t.Run("refetched when the resourceVersion changes", func(t *testing.T) {
		e.wantSecrets("a/tls=two")
		e.wantGets("tls", 2)
	})
	t.Run("kept when a GET fails", func(t *testing.T) {
		e.failGets.Store(true)
		e.putMeta("a", "tls", "14")
		e.putSecret("a", "never-read", "15", "x")
		e.putIngress(tlsIngress("a", "second", "never-read"))
		_, got, err := e.snapshot()
		if want := []string{"a/tls=two"}; !slices.Equal(got, want) {
			t.Errorf("Secrets %q, want %q (the last data of a/tls, nothing of a/never-read)", got, want)
		}
		if err == nil || !strings.Contains(err.Error(), "a/never-read") || strings.Contains(err.Error(), "a/tls") {
			t.Errorf("error %v, want one that names a/never-read only", err)
		}
		if e.w.secrets.retry == nil || e.w.secrets.backoff != minRetry {
			t.Errorf("no retry scheduled after %v", e.w.secrets.backoff)
		}
		e.failGets.Store(false)
		e.putSecret("a", "tls", "16", "three")
		e.wantSecrets("a/never-read=x", "a/tls=three")
		if e.w.secrets.retry != nil || e.w.secrets.backoff != 0 {
			t.Error("the retry is still scheduled after reads that succeeded")
		}
	})
	t.Run("dropped when no longer referenced", func(t *testing.T) {
		e.deleteIngress("a", "second")
		e.wantSecrets("a/tls=three")
		if _, ok := e.w.secrets.data[snapshot.Key{Namespace: "a", Name: "never-read"}]; ok {
			t.Error("the data of a/never-read is still cached")
		}
		if n := e.signalsOf(func() { e.putMeta("a", "never-read", "17") }, "tls", "18", "four"); n != 1 {
			t.Errorf("%d signals, want 1: a/never-read is no longer referenced", n)
		}
	})
	t.Run("absent when deleted", func(t *testing.T) {
		gets := e.gets("tls")
		e.deleteMeta("a", "tls")
		e.wantSecrets()
		e.wantGets("tls", gets) // a deleted Secret is not read
		if len(e.w.secrets.data) != 0 {
			t.Errorf("cached data left: %v", e.w.secrets.data)
		}
	})
	t.Run("absent when the GET says NotFound", func(t *testing.T) {
		e.putMeta("a", "tls", "19") // metadata ahead of the GET
		if err := e.client.CoreV1().Secrets("a").Delete(e.ctx, "tls", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.wantSecrets()
	})
}

// TestExtraSecrets checks a flag's Secret outside the watched namespace: it
// is watched alone and always referenced.
// TestOtherControllersSecretsAreNotRead: the Secrets of Ingresses of
// another controller's class (ingress-nginx's TLS keys during a migration)
// are neither read nor kept, and their changes cost nothing.
func TestOtherControllersSecretsAreNotRead(t *testing.T) {
	e := newFakeEnv(t, Options{})
	e.putSecret("a", "theirs", "10", "nginx's key")
	e.putSecret("a", "ours", "11", "ramjet's key")
	theirs := tlsIngress("a", "theirs", "theirs")
	nginx := "nginx"
	theirs.Spec.IngressClassName = &nginx
	e.putIngress(theirs)
	e.putIngress(tlsIngress("a", "ours", "ours"))
	e.wantSecrets("a/ours=ramjet's key")
	e.wantGets("theirs", 0)
	if n := e.signalsOf(func() { e.putMeta("a", "theirs", "12") }, "ours", "13", "renewed"); n != 1 {
		t.Errorf("%d signals, want 1 (a/ours only)", n)
	}
}

func TestExtraSecrets(t *testing.T) {
	e := newFakeEnv(t, Options{Namespace: "a", ExtraSecrets: []snapshot.Key{{Namespace: "system", Name: "default-cert"}, {Namespace: "a", Name: "inside"}}})
	if n := len(e.w.secrets.sources); n != 2 {
		t.Fatalf("%d metadata informers, want 2 (namespace a, system/default-cert)", n)
	}
	e.putSecret("system", "default-cert", "10", "cert")
	e.putSecret("a", "inside", "11", "in")
	e.wantSecrets("a/inside=in", "system/default-cert=cert")
	before := e.signals.Load()
	e.putSecret("system", "default-cert", "12", "cert2")
	e.eventually("the signal of system/default-cert", func() bool { return e.signals.Load() > before })
	e.wantSecrets("a/inside=in", "system/default-cert=cert2")
}

func TestOlder(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"9", "10", true}, {"10", "9", false}, {"10", "10", false}, {"x", "y", true}, {"x", "x", false},
	} {
		if got := older(tc.a, tc.b); got != tc.want {
			t.Errorf("older(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestTrimMeta(t *testing.T) {
	in := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "s", ResourceVersion: "3", UID: "u",
		Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: `{"data":{"password":"c2VjcmV0"}}`}, Labels: map[string]string{"owner": "helm"}}}
	out, _ := trimMeta(in)
	want := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "s", ResourceVersion: "3", UID: "u"}}
	if got := out.(*metav1.PartialObjectMetadata); !equalJSON(t, got, want) {
		t.Errorf("trimMeta kept %+v", got.ObjectMeta)
	}
	again, _ := trimMeta(out)
	if !equalJSON(t, again, want) {
		t.Error("trimMeta is not idempotent")
	}
}
