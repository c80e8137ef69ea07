package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// Bounds of the reads of referenced objects.
const (
	// readers is the number of concurrent GETs of one kind.
	readers = 8
	// readTimeout bounds one GET, so that a stuck request does not hold a
	// rebuild.
	readTimeout = 10 * time.Second
	// The first retry after a failed read comes after minRetry, then the
	// delay doubles up to maxRetry.
	minRetry, maxRetry = time.Second, time.Minute
)

// kind is a kind of object the controller reads only when something
// references it: its name, its resource, how to GET one and what of it to
// keep.
type kind[T metav1.Object] struct {
	name     string // "Secret"
	resource schema.GroupVersionResource
	get      func(ctx context.Context, client kubernetes.Interface, k snapshot.Key) (T, error)
	trim     func(T) T
}

// secretKind: translation reads a Secret's type and data.
var secretKind = kind[*corev1.Secret]{
	name:     "Secret",
	resource: corev1.SchemeGroupVersion.WithResource("secrets"),
	get: func(ctx context.Context, client kubernetes.Interface, k snapshot.Key) (*corev1.Secret, error) {
		return client.CoreV1().Secrets(k.Namespace).Get(ctx, k.Name, metav1.GetOptions{})
	},
	trim: func(s *corev1.Secret) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: keptMeta(s), Type: s.Type, Data: s.Data, Immutable: s.Immutable}
	},
}

// configMapKind: translation reads a ConfigMap's data.
var configMapKind = kind[*corev1.ConfigMap]{
	name:     "ConfigMap",
	resource: corev1.SchemeGroupVersion.WithResource("configmaps"),
	get: func(ctx context.Context, client kubernetes.Interface, k snapshot.Key) (*corev1.ConfigMap, error) {
		return client.CoreV1().ConfigMaps(k.Namespace).Get(ctx, k.Name, metav1.GetOptions{})
	},
	trim: func(c *corev1.ConfigMap) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: keptMeta(c), Data: c.Data, Immutable: c.Immutable}
	},
}

// keptMeta is what identifies a referenced object.
func keptMeta(o metav1.Object) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: o.GetName(), UID: o.GetUID(), ResourceVersion: o.GetResourceVersion()}
}

// refCache knows every object of a kind by its metadata (one informer for
// the watched namespaces, one per extra object outside them) and holds the
// data of the referenced ones only.
type refCache[T metav1.Object] struct {
	kind    kind[T]
	client  kubernetes.Interface
	log     *slog.Logger
	signal  func()
	sources []*metaSource
	wg      sync.WaitGroup

	// mu guards referenced, which the event handlers read.
	mu         sync.RWMutex
	referenced map[snapshot.Key]bool

	// Owned by Snapshot (Watch.snapMu).
	data    map[snapshot.Key]T
	backoff time.Duration
	retry   *time.Timer
}

// metaSource is a metadata informer of one kind: all of a namespace (all
// namespaces when namespace is ""), or the one object named only.
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

// newRefCache returns the cache of kind k: its objects in namespace ("" for
// all), and extras, which are referenced from the start and watched alone
// when outside namespace (a list and watch of that one name).
func newRefCache[T metav1.Object](k kind[T], client kubernetes.Interface, meta metadata.Interface, namespace string, extras []snapshot.Key, log *slog.Logger, signal func()) *refCache[T] {
	c := &refCache[T]{kind: k, client: client, log: log, signal: signal, referenced: map[snapshot.Key]bool{}, data: map[snapshot.Key]T{}}
	scope := "in all namespaces"
	if namespace != "" {
		scope = "in namespace " + namespace
	}
	c.addSource(&metaSource{name: k.name + "s (metadata) " + scope, namespace: namespace,
		informer: metadatainformer.NewFilteredMetadataInformer(meta, k.resource, namespace, 0, cache.Indexers{}, nil).Informer()})
	for _, key := range extras {
		c.referenced[key] = true
		if c.source(key) != nil {
			continue
		}
		selector := fields.OneTermEqualSelector("metadata.name", key.Name).String()
		c.addSource(&metaSource{name: k.name + " " + key.String() + " (metadata)", namespace: key.Namespace, only: key.Name,
			informer: metadatainformer.NewFilteredMetadataInformer(meta, k.resource, key.Namespace, 0, cache.Indexers{},
				func(o *metav1.ListOptions) { o.FieldSelector = selector }).Informer()})
	}
	return c
}

func (c *refCache[T]) addSource(s *metaSource) {
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

// source returns the informer that knows the object k, or nil when k is
// not watched.
func (c *refCache[T]) source(k snapshot.Key) *metaSource {
	for _, s := range c.sources {
		if s.covers(k) {
			return s
		}
	}
	return nil
}

// event signals a change of an object only when it is referenced: other
// objects' churn costs a map lookup.
func (c *refCache[T]) event(obj any) {
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

func (c *refCache[T]) start(ctx context.Context) {
	for _, s := range c.sources {
		c.wg.Go(func() { s.informer.RunWithContext(ctx) })
	}
}

func (c *refCache[T]) wait() { c.wg.Wait() }

// setReferenced replaces the set of objects whose events signal a change.
// The caller does not change refs afterwards.
func (c *refCache[T]) setReferenced(refs map[snapshot.Key]bool) {
	c.mu.Lock()
	c.referenced = refs
	c.mu.Unlock()
}

// load returns the referenced objects that exist, reading those whose data
// is missing or older than their metadata, and drops the data of the
// others. See Watch.Snapshot for the handling of failed reads.
func (c *refCache[T]) load(ctx context.Context, refs map[snapshot.Key]bool) ([]T, error) {
	for k := range c.data {
		if !refs[k] {
			delete(c.data, k)
		}
	}
	var out []T
	var reads []read[T]
	for k := range refs {
		src := c.source(k)
		if src == nil {
			c.log.Debug("a referenced "+c.kind.name+" is outside the watched namespace; it is left out", "object", k.String())
			continue
		}
		obj, exists, _ := src.informer.GetIndexer().GetByKey(k.String())
		m, ok := obj.(metav1.Object)
		if !exists || !ok {
			delete(c.data, k)
			continue
		}
		if cached, ok := c.data[k]; ok && !older(cached.GetResourceVersion(), m.GetResourceVersion()) {
			out = append(out, cached)
			continue
		}
		reads = append(reads, read[T]{key: k})
	}
	start := time.Now()
	c.read(ctx, reads)
	if len(reads) > 0 {
		c.log.Debug("read referenced "+c.kind.name+"s", "count", len(reads), "duration", time.Since(start))
	}
	var errs []error
	failed := false
	for _, r := range reads {
		switch {
		case r.err == nil:
			c.log.Debug("read a referenced "+c.kind.name, "object", r.key.String(), "resourceVersion", r.object.GetResourceVersion())
			c.data[r.key] = c.kind.trim(r.object)
			out = append(out, c.data[r.key])
		case apierrors.IsNotFound(r.err):
			delete(c.data, r.key)
		default:
			failed = true
			if cached, ok := c.data[r.key]; ok {
				c.log.Warn("reading a referenced "+c.kind.name+" failed; its last data is used", "object", r.key.String(), "error", r.err)
				out = append(out, cached)
				continue
			}
			c.log.Warn("reading a referenced "+c.kind.name+" failed; it is left out", "object", r.key.String(), "error", r.err)
			errs = append(errs, fmt.Errorf("%s %s could not be read: %w", strings.ToLower(c.kind.name), r.key, r.err))
		}
	}
	c.scheduleRetry(failed)
	return out, errors.Join(errs...)
}

// read is one GET of a referenced object.
type read[T metav1.Object] struct {
	key    snapshot.Key
	object T
	err    error
}

// read runs the GETs, readers at a time.
func (c *refCache[T]) read(ctx context.Context, reads []read[T]) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(readers, len(reads)) {
		wg.Go(func() {
			for i := range next {
				r := &reads[i]
				rctx, cancel := context.WithTimeout(ctx, readTimeout)
				r.object, r.err = c.kind.get(rctx, c.client, r.key)
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
func (c *refCache[T]) scheduleRetry(failed bool) {
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

// trimMeta keeps the name, namespace, UID and resourceVersion of an
// object's metadata: its labels and annotations may be large (and kubectl's
// last-applied-configuration holds a Secret's data).
func trimMeta(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	return &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Namespace: m.Namespace, Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion,
	}}, nil
}
