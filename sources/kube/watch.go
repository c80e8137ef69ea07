// Package kube watches the Kubernetes objects the controller translates and
// builds snapshots from its informers' caches: IngressClasses (always
// cluster-wide), Ingresses, Services and EndpointSlices (in one namespace or
// all), and only the Secrets and ConfigMaps the Ingresses reference.
//
// Secrets and ConfigMaps are watched by metadata only (names and
// resourceVersions): the data of one is read (GET) when an Ingress or the
// flags reference it, kept while they do and read again when its
// resourceVersion changes. A cluster's other Secrets and ConfigMaps (Helm
// releases, service-account tokens, kube-root-ca.crt) cost a few hundred
// bytes each and their changes cost nothing.
//
// The objects of a Snapshot are the informers' own: they are shared between
// snapshots and with the informers, and must never be changed. The
// translation (sources/ingress, registry and the annotation families, core)
// only reads them; TestTranslationLeavesSnapshotUnchanged checks it.
//
// To save memory, the informers drop what translation never reads before an
// object enters a cache: metadata.managedFields of every object, the
// kubectl.kubernetes.io/last-applied-configuration annotation of Services and
// EndpointSlices, and the targetRef and deprecatedTopology of EndpointSlice
// endpoints. Ingresses keep all their annotations. Because of this, never
// send a cached object back to the API server with Update (status included):
// use a patch.
package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/ramjet-dev/ramjet/sources/ingress"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// Options configure a Watch.
type Options struct {
	// Namespace limits Ingresses, Services, EndpointSlices, Secrets and
	// ConfigMaps to one namespace (--watch-namespace); "" watches all.
	// IngressClasses are always watched cluster-wide.
	Namespace string
	// References returns the Secrets and ConfigMaps an Ingress references
	// whose data translation needs; snap holds the IngressClasses (for the
	// class of the Ingress). Nil means ingress.ServedRefs with the default
	// classes.
	References func(snap *snapshot.Snapshot, ing *networkingv1.Ingress) snapshot.Refs
	// ExtraSecrets are Secrets referenced by the flags
	// (--default-ssl-certificate). One outside Namespace is watched alone
	// (a list and watch of that one name).
	ExtraSecrets []snapshot.Key
	// Log receives the Watch's messages (never Secret data); nil discards
	// them.
	Log *slog.Logger
}

// Watch runs the informers and builds snapshots from their caches.
type Watch struct {
	opts    Options
	changed chan struct{}

	factory    informers.SharedInformerFactory
	synced     []namedInformer
	classes    networkinglisters.IngressClassLister
	ings       networkinglisters.IngressLister
	services   corelisters.ServiceLister
	slices     discoverylisters.EndpointSliceLister
	secrets    *refCache[*corev1.Secret]
	configMaps *refCache[*corev1.ConfigMap]

	// snapMu serialises Snapshot, which owns the data caches.
	snapMu sync.Mutex
}

// namedInformer is an informer and the name WaitForSync gives it.
type namedInformer struct {
	name     string
	informer cache.SharedIndexInformer
}

// NewForConfig returns a Watch with clients made from cfg: the typed client
// speaks protobuf (cheaper to decode than JSON for EndpointSlices), and the
// metadata client reads Secrets' and ConfigMaps' metadata. When cfg sets neither QPS nor a
// rate limiter, QPS is 50 and Burst 100 instead of client-go's 5 and 10,
// which would make the first snapshot of a cluster with a thousand
// referenced Secrets take more than three minutes.
func NewForConfig(cfg *rest.Config, opts Options) (*Watch, error) {
	typed := rest.CopyConfig(cfg)
	if typed.QPS == 0 && typed.RateLimiter == nil {
		typed.QPS, typed.Burst = 50, 100
	}
	meta := rest.CopyConfig(typed)
	typed.ContentType = runtime.ContentTypeProtobuf
	typed.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	client, err := kubernetes.NewForConfig(typed)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	metaClient, err := metadata.NewForConfig(meta)
	if err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	return NewWatch(client, metaClient, opts), nil
}

// NewWatch returns a Watch that reads objects with client and the metadata
// of Secrets and ConfigMaps with meta. Nothing runs before Start.
func NewWatch(client kubernetes.Interface, meta metadata.Interface, opts Options) *Watch {
	if opts.References == nil {
		defaults := ingress.Options{IngressClass: ingress.DefaultIngressClass, ControllerClass: ingress.DefaultControllerClass}
		opts.References = func(snap *snapshot.Snapshot, ing *networkingv1.Ingress) snapshot.Refs {
			return ingress.ServedRefs(snap, ing, defaults)
		}
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Watch{opts: opts, changed: make(chan struct{}, 1)}
	w.factory = informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(opts.Namespace), informers.WithTransform(trim))

	classes := w.factory.Networking().V1().IngressClasses()
	ings := w.factory.Networking().V1().Ingresses()
	services := w.factory.Core().V1().Services()
	slices := w.factory.Discovery().V1().EndpointSlices()
	w.classes, w.ings, w.services, w.slices = classes.Lister(), ings.Lister(), services.Lister(), slices.Lister()

	scope := "in all namespaces"
	if opts.Namespace != "" {
		scope = "in namespace " + opts.Namespace
	}
	w.synced = []namedInformer{
		{"IngressClasses", classes.Informer()},
		{"Ingresses " + scope, ings.Informer()},
		{"Services " + scope, services.Informer()},
		{"EndpointSlices " + scope, slices.Informer()},
	}
	w.handle(classes.Informer(), changedUpdate)
	w.handle(ings.Informer(), ingressUpdate)
	w.handle(services.Informer(), changedUpdate)
	w.handle(slices.Informer(), changedUpdate)

	w.secrets = newRefCache(secretKind, client, meta, opts.Namespace, opts.ExtraSecrets, log, w.signal)
	w.configMaps = newRefCache(configMapKind, client, meta, opts.Namespace, nil, log, w.signal)
	for _, src := range append(w.secrets.sources, w.configMaps.sources...) {
		w.synced = append(w.synced, namedInformer{src.name, src.informer})
	}
	return w
}

// handle makes every add and delete, and the updates that update reports,
// signal Changed. Handlers only signal: they never block the
// informer.
func (w *Watch) handle(informer cache.SharedIndexInformer, update func(old, new any) bool) {
	// AddEventHandler fails only on a stopped informer, and this one has not
	// started.
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { w.signal() },
		UpdateFunc: func(old, new any) {
			if update(old, new) {
				w.signal()
			}
		},
		DeleteFunc: func(any) { w.signal() },
	})
}

// changedUpdate reports an update that changed the object: a relist
// delivers unchanged objects as updates with the same resourceVersion.
func changedUpdate(old, new any) bool {
	o, okOld := old.(metav1.Object)
	n, okNew := new.(metav1.Object)
	return !okOld || !okNew || o.GetResourceVersion() != n.GetResourceVersion()
}

// ingressUpdate reports an update of an Ingress that translation can see:
// its spec or annotations changed. A status update (the leader writing
// status.loadBalancer) causes no rebuild.
func ingressUpdate(old, new any) bool {
	o, okOld := old.(*networkingv1.Ingress)
	n, okNew := new.(*networkingv1.Ingress)
	if !okOld || !okNew {
		return true
	}
	if o.ResourceVersion == n.ResourceVersion {
		return false
	}
	return !maps.Equal(o.Annotations, n.Annotations) || !reflect.DeepEqual(o.Spec, n.Spec)
}

// signal makes Changed ready without ever blocking.
func (w *Watch) signal() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// Changed signals that an object changed since the signal was last taken:
// any add, delete or update of an IngressClass, Ingress (spec or
// annotations), Service or EndpointSlice, and of a Secret or ConfigMap that
// the last Snapshot (or ExtraSecrets) references. A signal also comes after
// a referenced Secret or ConfigMap could not be read, to retry (after 1 s, doubling up to
// 1 min). The channel holds at most one signal; the signals of the initial
// sync are still in it after WaitForSync.
func (w *Watch) Changed() <-chan struct{} { return w.changed }

// Start starts the informers and returns; they run until ctx ends (Wait
// waits for them to stop).
func (w *Watch) Start(ctx context.Context) {
	w.factory.Start(ctx.Done())
	w.secrets.start(ctx)
	w.configMaps.start(ctx)
}

// Wait waits for the informers started by Start to stop, after the
// context given to Start ended.
func (w *Watch) Wait() {
	w.factory.Shutdown()
	w.secrets.wait()
	w.configMaps.wait()
}

// WaitForSync waits until every informer has synced (listed its objects
// once). When ctx ends first it returns an error naming the informers that
// did not sync, with ctx's error.
func (w *Watch) WaitForSync(ctx context.Context) error {
	var missing []string
	for _, n := range w.synced {
		select {
		case <-n.informer.HasSyncedChecker().Done():
		case <-ctx.Done():
			if !n.informer.HasSynced() {
				missing = append(missing, n.name)
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("caches not synced: %s: %w", strings.Join(missing, ", "), ctx.Err())
	}
	return nil
}

// Snapshot builds a snapshot from the informers' caches: every
// IngressClass, Ingress, Service and EndpointSlice, sorted, and the
// referenced Secrets and ConfigMaps (Options.References of every Ingress,
// and ExtraSecrets) that exist. The objects are the informers' and must not
// be changed (see the package documentation).
//
// A referenced Secret or ConfigMap whose data is not cached, or cached at an
// older resourceVersion than its metadata, is read from the API server;
// those no longer referenced leave the cache. When a read fails the last
// data read is used, so that an outage never removes routes; an object never
// read is left out. The error is not nil when such an object (one that
// exists but was never read) is missing from the snapshot, or ctx ended during the
// reads; the snapshot is complete otherwise. Snapshot is safe to call from
// several goroutines, one at a time.
func (w *Watch) Snapshot(ctx context.Context) (*snapshot.Snapshot, error) {
	w.snapMu.Lock()
	defer w.snapMu.Unlock()
	classes, _ := w.classes.List(labels.Everything())
	ings, _ := w.ings.List(labels.Everything())
	services, _ := w.services.List(labels.Everything())
	slices, _ := w.slices.List(labels.Everything())
	// The maps are sized once: a snapshot of a large cluster is built for
	// every rebuild.
	snap := &snapshot.Snapshot{
		IngressClasses: make(map[string]*networkingv1.IngressClass, len(classes)),
		Ingresses:      make([]*networkingv1.Ingress, 0, len(ings)),
		Services:       make(map[snapshot.Key]*corev1.Service, len(services)),
		EndpointSlices: make(map[snapshot.Key][]*discoveryv1.EndpointSlice, len(services)),
	}
	for _, c := range classes {
		snap.Add(c)
	}
	secretRefs := make(map[snapshot.Key]bool, len(ings)+len(w.opts.ExtraSecrets))
	configMapRefs := map[snapshot.Key]bool{}
	for _, k := range w.opts.ExtraSecrets {
		secretRefs[k] = true
	}
	for _, ing := range ings {
		snap.Add(ing)
		refs := w.opts.References(snap, ing)
		addRefs(secretRefs, refs.Secrets)
		addRefs(configMapRefs, refs.ConfigMaps)
	}
	// The references are published before the metadata is read: an event
	// that lands after the read signals Changed.
	w.secrets.setReferenced(secretRefs)
	w.configMaps.setReferenced(configMapRefs)
	for _, s := range services {
		snap.Add(s)
	}
	for _, s := range slices {
		snap.Add(s)
	}
	secrets, secretsErr := w.secrets.load(ctx, secretRefs)
	configMaps, configMapsErr := w.configMaps.load(ctx, configMapRefs)
	snap.Secrets = make(map[snapshot.Key]*corev1.Secret, len(secrets))
	for _, s := range secrets {
		snap.Add(s)
	}
	snap.ConfigMaps = make(map[snapshot.Key]*corev1.ConfigMap, len(configMaps))
	for _, c := range configMaps {
		snap.Add(c)
	}
	err := errors.Join(secretsErr, configMapsErr)
	snap.Sort()
	return snap, err
}

// addRefs adds the named keys to refs.
func addRefs(refs map[snapshot.Key]bool, keys []snapshot.Key) {
	for _, k := range keys {
		if k.Namespace != "" && k.Name != "" {
			refs[k] = true
		}
	}
}

// lastApplied is kubectl's copy of the applied object, which translation
// never reads on Services and EndpointSlices.
const lastApplied = corev1.LastAppliedConfigAnnotation

// trim drops, before an object enters a cache, what translation never
// reads. It changes the object in place (allowed since client-go 1.27: the
// transform sees the object first) and is idempotent.
func trim(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	switch o := obj.(type) {
	case *corev1.Service:
		delete(o.Annotations, lastApplied)
	case *discoveryv1.EndpointSlice:
		delete(o.Annotations, lastApplied)
		for i := range o.Endpoints {
			o.Endpoints[i].TargetRef = nil
			o.Endpoints[i].DeprecatedTopology = nil
		}
	}
	return obj, nil
}
