package kube

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ramjet-dev/ramjet/sources/ingress"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
	"github.com/ramjet-dev/ramjet/test/harness"
)

// syncBuffer is a bytes.Buffer that the Watch's goroutines may write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAgainstAPIServer runs a Watch against a real kube-apiserver: the
// snapshot holds the objects and only the referenced Secrets, unrelated
// Secrets never signal, a changed Secret is read again, and while the API
// server is down the last data stays.
func TestAgainstAPIServer(t *testing.T) {
	c := harness.StartAPIServer(t)
	ctx := t.Context()
	client := c.Client
	for _, ns := range []string{"shop", "other"} {
		if _, err := client.CoreV1().Namespaces().Create(ctx, harness.Namespace(ns), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	secret := func(ns, name string, typ corev1.SecretType, data map[string]string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Type: typ, Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return s
	}
	create := func(s *corev1.Secret) {
		t.Helper()
		if _, err := client.CoreV1().Secrets(s.Namespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	update := func(s *corev1.Secret) {
		t.Helper()
		if _, err := client.CoreV1().Secrets(s.Namespace).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	certPEM, keyPEM := selfSigned(t)
	create(secret("shop", "web-tls", corev1.SecretTypeTLS, map[string]string{"tls.crt": certPEM, "tls.key": keyPEM}))
	create(secret("shop", "users", corev1.SecretTypeOpaque, map[string]string{"auth": "users-value-1"}))
	create(secret("shop", "unrelated", corev1.SecretTypeOpaque, map[string]string{"k": "unrelated-value"}))
	create(secret("other", "unrelated", corev1.SecretTypeOpaque, map[string]string{"k": "unrelated-value"}))
	if _, err := client.CoreV1().Services("shop").Create(ctx, harness.Service("shop", "web", 80, 8080), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.DiscoveryV1().EndpointSlices("shop").Create(ctx, harness.EndpointSlice("shop", "web", 8080, "198.18.0.10"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	class := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "ramjet"}, Spec: networkingv1.IngressClassSpec{Controller: ingress.DefaultControllerClass}}
	if _, err := client.NetworkingV1().IngressClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ing := tlsIngress("shop", "web", "web-tls")
	ing.Spec.IngressClassName = new("ramjet")
	ing.Spec.DefaultBackend = &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}
	ing.Annotations = map[string]string{"nginx.ingress.kubernetes.io/auth-type": "basic", "nginx.ingress.kubernetes.io/auth-secret": "users"}
	if _, err := client.NetworkingV1().Ingresses("shop").Create(ctx, ing, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var logs syncBuffer
	w, err := NewForConfig(c.Config, withIngressInput(Options{Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}))
	if err != nil {
		t.Fatal(err)
	}
	var count int // Secret events that signalled
	var countMu sync.Mutex
	signal := w.secrets.signal
	w.secrets.signal = func() {
		countMu.Lock()
		count++
		countMu.Unlock()
		signal()
	}
	signalCount := func() int {
		countMu.Lock()
		defer countMu.Unlock()
		return count
	}
	watchCtx, stop := context.WithCancel(ctx)
	t.Cleanup(func() { stop(); w.Wait() })
	w.Start(watchCtx)
	syncCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := w.WaitForSync(syncCtx); err != nil {
		t.Fatal(err)
	}

	secretValues := func(snap *snapshot.Snapshot) []string {
		var out []string
		for k, s := range snap.Secrets {
			for name, v := range s.Data {
				out = append(out, k.String()+":"+name+"="+string(v))
			}
		}
		slices.Sort(out)
		return out
	}
	take := func() *snapshot.Snapshot {
		t.Helper()
		snap, err := w.Snapshot(ctx)
		if err != nil {
			t.Fatalf("Snapshot: %v", err)
		}
		return snap
	}

	web := snapshot.Key{Namespace: "shop", Name: "web"}
	snap := take()
	if snap.IngressClasses["ramjet"] == nil || len(snap.Ingresses) != 1 || snap.Services[web] == nil || len(snap.EndpointSlices[web]) != 1 {
		t.Fatalf("snapshot: %d classes, %d Ingresses, Services %v, %d slices of shop/web; want the IngressClass, the Ingress, the Service and its slice",
			len(snap.IngressClasses), len(snap.Ingresses), slices.Collect(maps.Keys(snap.Services)), len(snap.EndpointSlices[web]))
	}
	if snap.Ingresses[0].ManagedFields != nil || snap.Services[web].ManagedFields != nil || snap.EndpointSlices[web][0].ManagedFields != nil {
		t.Error("the caches kept managedFields")
	}
	want := []string{"shop/users:auth=users-value-1", "shop/web-tls:tls.crt=" + certPEM, "shop/web-tls:tls.key=" + keyPEM}
	if got := secretValues(snap); !slices.Equal(got, want) {
		t.Fatalf("Secrets %q, want %q", got, want)
	}

	t.Run("unrelated Secrets do not signal", func(t *testing.T) {
		before := signalCount()
		for _, ns := range []string{"shop", "other"} {
			update(secret(ns, "unrelated", corev1.SecretTypeOpaque, map[string]string{"k": "unrelated-value-2"}))
			if err := client.CoreV1().Secrets(ns).Delete(ctx, "unrelated", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// The metadata informer handles events in order: once the change of
		// shop/users has signalled, the others have been handled.
		update(secret("shop", "users", corev1.SecretTypeOpaque, map[string]string{"auth": "users-value-2"}))
		deadline := time.Now().Add(10 * time.Second)
		for signalCount() == before && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if n := signalCount() - before; n != 1 {
			t.Errorf("%d signals, want 1 (shop/users only)", n)
		}
		want := []string{"shop/users:auth=users-value-2", "shop/web-tls:tls.crt=" + certPEM, "shop/web-tls:tls.key=" + keyPEM}
		if got := secretValues(take()); !slices.Equal(got, want) {
			t.Errorf("Secrets %q, want %q", got, want)
		}
	})

	t.Run("outage keeps the last data", func(t *testing.T) {
		update(secret("shop", "users", corev1.SecretTypeOpaque, map[string]string{"auth": "users-value-3"}))
		users := snapshot.Key{Namespace: "shop", Name: "users"}
		deadline := time.Now().Add(10 * time.Second)
		for {
			obj, _, _ := w.secrets.source(users).informer.GetIndexer().GetByKey(users.String())
			if older(w.secrets.data[users].ResourceVersion, obj.(metav1.Object).GetResourceVersion()) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the metadata informer did not see the update")
			}
			time.Sleep(5 * time.Millisecond)
		}
		stopping := time.Now()
		c.Stop()
		t.Logf("API server stopped in %s", time.Since(stopping).Round(time.Millisecond))
		snap, err := w.Snapshot(ctx)
		if err != nil {
			t.Errorf("Snapshot during the outage: %v", err)
		}
		want := []string{"shop/users:auth=users-value-2", "shop/web-tls:tls.crt=" + certPEM, "shop/web-tls:tls.key=" + keyPEM}
		if got := secretValues(snap); !slices.Equal(got, want) {
			t.Errorf("Secrets during the outage %q, want the last read %q", got, want)
		}
		if len(snap.Ingresses) != 1 || snap.Services[web] == nil || len(snap.EndpointSlices[web]) != 1 {
			t.Error("objects left the snapshot during the outage")
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		want[0] = "shop/users:auth=users-value-3"
		if got := secretValues(take()); !slices.Equal(got, want) {
			t.Errorf("Secrets after the outage %q, want %q", got, want)
		}
	})

	for _, v := range []string{pemBody(certPEM), pemBody(keyPEM), "users-value", "unrelated-value"} {
		if strings.Contains(logs.String(), v) {
			t.Errorf("the log holds Secret data:\n%s", logs.String())
		}
	}
	if !strings.Contains(logs.String(), "reading a referenced Secret failed; its last data is used") {
		t.Errorf("the failed read during the outage was not logged:\n%s", logs.String())
	}
}

// selfSigned returns a certificate and its key in PEM.
func selfSigned(t *testing.T) (certPEM, keyPEM string) {
	t.Helper()
	cert, _, err := harness.SelfSigned("a.example")
	if err != nil {
		t.Fatal(err)
	}
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}))
}

// pemBody is the first line of base64 of a PEM block.
func pemBody(s string) string { return strings.Split(s, "\n")[1] }
