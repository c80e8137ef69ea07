package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// Bounds of the Secret reads.
const (
	// secretReaders is the number of concurrent GETs.
	secretReaders = 8
	// secretReadTimeout bounds one GET, so that a stuck request does not
	// hold a rebuild.
	secretReadTimeout = 10 * time.Second
	// The first retry after a failed read comes after minRetry, then the
	// delay doubles up to maxRetry.
	minRetry, maxRetry = time.Second, time.Minute
)

var secretsResource = corev1.SchemeGroupVersion.WithResource("secrets")

// secretCache knows every Secret by its metadata (one informer for the
// watched namespaces, one per extra Secret outside them) and holds the data
// of the referenced ones only.
type secretCache struct {
	client  kubernetes.Interface
	log     *slog.Logger
	signal  func()
	sources []*metaSource
	wg      sync.WaitGroup

	// mu guards referenced, which the event handlers read.
	mu         sync.RWMutex
	referenced map[snapshot.Key]bool

	// Owned by Snapshot (Watch.snapMu).
	data    map[snapshot.Key]*corev1.Secret
	backoff time.Duration
	retry   *time.Timer
}

// metaSource is a metadata informer of Secrets: all of a namespace (all
// namespaces when namespace is ""), or the one Secret named only.
type metaSource struct {
	name      string
	namespace string
	only      string
	informer  cache.SharedIndexInformer
}

func (s *metaSource) covers(k snapshot.Key) bool {
	if s.only != "" {
		return k.Namespace == s.namespace && k.Name == s.only
	}
	return s.namespace == "" || s.namespace == k.Namespace
}

func newSecretCache(client kubernetes.Interface, meta metadata.Interface, namespace string, extras []snapshot.Key, log *slog.Logger, signal func()) *secretCache {
	c := &secretCache{client: client, log: log, signal: signal, referenced: map[snapshot.Key]bool{}, data: map[snapshot.Key]*corev1.Secret{}}
	scope := "in all namespaces"
	if namespace != "" {
		scope = "in namespace " + namespace
	}
	c.addSource(&metaSource{name: "Secrets (metadata) " + scope, namespace: namespace,
		informer: metadatainformer.NewFilteredMetadataInformer(meta, secretsResource, namespace, 0, cache.Indexers{}, nil).Informer()})
	for _, k := range extras {
		c.referenced[k] = true
		if c.source(k) != nil {
			continue
		}
		selector := fields.OneTermEqualSelector("metadata.name", k.Name).String()
		c.addSource(&metaSource{name: "Secret " + k.String() + " (metadata)", namespace: k.Namespace, only: k.Name,
			informer: metadatainformer.NewFilteredMetadataInformer(meta, secretsResource, k.Namespace, 0, cache.Indexers{},
				func(o *metav1.ListOptions) { o.FieldSelector = selector }).Informer()})
	}
	return c
}

func (c *secretCache) addSource(s *metaSource) {
	// Both calls fail only on a started informer.
	_ = s.informer.SetTransform(trimMeta)
	_, _ = s.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.event,
		UpdateFunc: func(old, new any) {
			if changedUpdate(old, new) {
				c.event(new)
			}
		},
		DeleteFunc: c.event,
	})
	c.sources = append(c.sources, s)
}

// source returns the informer that knows the Secret k, or nil when k is
// not watched.
func (c *secretCache) source(k snapshot.Key) *metaSource {
	for _, s := range c.sources {
		if s.covers(k) {
			return s
		}
	}
	return nil
}

// event signals a change of a Secret only when it is referenced: other
// Secrets' churn costs a map lookup.
func (c *secretCache) event(obj any) {
	var k snapshot.Key
	switch o := obj.(type) {
	case cache.DeletedFinalStateUnknown:
		k, _ = snapshot.ParseKey(o.Key)
	case metav1.Object:
		k = snapshot.Key{Namespace: o.GetNamespace(), Name: o.GetName()}
	}
	c.mu.RLock()
	referenced := c.referenced[k]
	c.mu.RUnlock()
	if referenced {
		c.signal()
	}
}

func (c *secretCache) start(ctx context.Context) {
	for _, s := range c.sources {
		c.wg.Go(func() { s.informer.RunWithContext(ctx) })
	}
}

func (c *secretCache) wait() { c.wg.Wait() }

// setReferenced replaces the set of Secrets whose events signal a change.
// The caller does not change refs afterwards.
func (c *secretCache) setReferenced(refs map[snapshot.Key]bool) {
	c.mu.Lock()
	c.referenced = refs
	c.mu.Unlock()
}

// load returns the referenced Secrets that exist, reading those whose data
// is missing or older than their metadata, and drops the data of the
// others. See Watch.Snapshot for the handling of failed reads.
func (c *secretCache) load(ctx context.Context, refs map[snapshot.Key]bool) ([]*corev1.Secret, error) {
	for k := range c.data {
		if !refs[k] {
			delete(c.data, k)
		}
	}
	var out []*corev1.Secret
	var reads []read
	for k := range refs {
		src := c.source(k)
		if src == nil {
			c.log.Debug("a referenced Secret is outside the watched namespace; it is left out", "secret", k.String())
			continue
		}
		obj, exists, _ := src.informer.GetIndexer().GetByKey(k.String())
		m, ok := obj.(metav1.Object)
		if !exists || !ok {
			delete(c.data, k)
			continue
		}
		if cached := c.data[k]; cached != nil && !older(cached.ResourceVersion, m.GetResourceVersion()) {
			out = append(out, cached)
			continue
		}
		reads = append(reads, read{key: k})
	}
	start := time.Now()
	c.read(ctx, reads)
	if len(reads) > 0 {
		c.log.Debug("read referenced Secrets", "count", len(reads), "duration", time.Since(start))
	}
	var errs []error
	failed := false
	for _, r := range reads {
		switch {
		case r.err == nil:
			c.log.Debug("read a referenced Secret", "secret", r.key.String(), "resourceVersion", r.secret.ResourceVersion)
			c.data[r.key] = trimSecret(r.secret)
			out = append(out, c.data[r.key])
		case apierrors.IsNotFound(r.err):
			delete(c.data, r.key)
		default:
			failed = true
			if cached := c.data[r.key]; cached != nil {
				c.log.Warn("reading a referenced Secret failed; its last data is used", "secret", r.key.String(), "error", r.err)
				out = append(out, cached)
				continue
			}
			c.log.Warn("reading a referenced Secret failed; it is left out", "secret", r.key.String(), "error", r.err)
			errs = append(errs, fmt.Errorf("secret %s could not be read: %w", r.key, r.err))
		}
	}
	c.scheduleRetry(failed)
	return out, errors.Join(errs...)
}

// read is one GET of a Secret.
type read struct {
	key    snapshot.Key
	secret *corev1.Secret
	err    error
}

// read runs the GETs, secretReaders at a time.
func (c *secretCache) read(ctx context.Context, reads []read) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(secretReaders, len(reads)) {
		wg.Go(func() {
			for i := range next {
				r := &reads[i]
				rctx, cancel := context.WithTimeout(ctx, secretReadTimeout)
				r.secret, r.err = c.client.CoreV1().Secrets(r.key.Namespace).Get(rctx, r.key.Name, metav1.GetOptions{})
				cancel()
			}
		})
	}
	for i := range reads {
		next <- i
	}
	close(next)
	wg.Wait()
}

// scheduleRetry signals a change after a delay when a read failed, so that
// the read is tried again even if nothing else changes.
func (c *secretCache) scheduleRetry(failed bool) {
	if c.retry != nil {
		c.retry.Stop()
		c.retry = nil
	}
	if !failed {
		c.backoff = 0
		return
	}
	c.backoff = min(max(2*c.backoff, minRetry), maxRetry)
	c.retry = time.AfterFunc(c.backoff, c.signal)
}

// older reports whether resourceVersion a is older than b. Versions that
// are not the API server's integers are compared for equality only.
func older(a, b string) bool {
	cmp, err := resourceversion.CompareResourceVersion(a, b)
	if err != nil {
		return a != b
	}
	return cmp < 0
}

// trimSecret keeps what translation reads of a Secret (its type and data)
// and what identifies it.
func trimSecret(s *corev1.Secret) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name, UID: s.UID, ResourceVersion: s.ResourceVersion},
		Type:       s.Type, Data: s.Data, Immutable: s.Immutable,
	}
}

// trimMeta keeps the name, namespace, UID and resourceVersion of a Secret's
// metadata: its labels and annotations may be large (and kubectl's
// last-applied-configuration holds the Secret's data).
func trimMeta(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	return &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Namespace: m.Namespace, Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion,
	}}, nil
}
