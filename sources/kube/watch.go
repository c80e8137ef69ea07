// Package kube watches the Kubernetes objects the controller translates and
// builds snapshots from its informers' caches: the kinds the enabled inputs
// name (Options.Kinds: IngressClasses and Ingresses for the Ingress input;
// GatewayClasses, Gateways, routes, ReferenceGrants, BackendTLSPolicies and
// Namespaces for the Gateway API input), Services and EndpointSlices, in
// one namespace or all (cluster-scoped kinds always cluster-wide), and only
// the Secrets and ConfigMaps the inputs' objects reference. A kind no
// enabled input names has no informer: a Gateway-only install neither
// watches nor needs permission to read Ingresses.
//
// Secrets and ConfigMaps are watched by metadata only (names and
// resourceVersions): the data of one is read (GET) when an object or the
// flags reference it, kept while they do and read again when its
// resourceVersion changes. A cluster's other Secrets and ConfigMaps (Helm
// releases, service-account tokens, kube-root-ca.crt) cost a few hundred
// bytes each and their changes cost nothing.
//
// The objects of a Snapshot are the informers' own: they are shared between
// snapshots and with the informers, and must never be changed. The
// translation (the inputs, registry and the annotation families, core)
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
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gatewayinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"

	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// Options configure a Watch.
type Options struct {
	// Kinds are the kinds the enabled inputs watch, besides Services and
	// EndpointSlices (which every input reads).
	Kinds []snapshot.Kind
	// Namespace limits the namespaced kinds, Secrets and ConfigMaps to one
	// namespace (--watch-namespace); "" watches all. Cluster-scoped kinds
	// (IngressClasses, GatewayClasses, Namespaces) are always watched
	// cluster-wide.
	Namespace string
	// References returns the Secrets and ConfigMaps whose data
	// translating the objects of snap needs; snap holds every watched
	// object, no Secret and no ConfigMap. Nil references none.
	References func(snap *snapshot.Snapshot) snapshot.Refs
	// ExtraSecrets are Secrets referenced by the flags
	// (--default-ssl-certificate). One outside Namespace is watched alone
	// (a list and watch of that one name).
	ExtraSecrets []snapshot.Key
	// Log receives the Watch's messages (never Secret data); nil discards
	// them.
	Log *slog.Logger
}

// Clients are the API clients of a Watch.
type Clients struct {
	// Kube reads the built-in kinds.
	Kube kubernetes.Interface
	// Metadata reads the metadata of Secrets and ConfigMaps.
	Metadata metadata.Interface
	// Gateway reads the Gateway API's kinds; it may be nil when no
	// Gateway API kind is watched.
	Gateway gatewayclient.Interface
}

// Watch runs the informers and builds snapshots from their caches.
type Watch struct {
	opts    Options
	changed chan struct{}

	factory        informers.SharedInformerFactory
	gatewayFactory gatewayinformers.SharedInformerFactory
	// watched are the informers of the objects a snapshot holds besides
	// Secrets and ConfigMaps, in the order WaitForSync names them.
	watched    []namedInformer
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
// speaks protobuf (cheaper to decode than JSON for EndpointSlices), the
// metadata client reads Secrets' and ConfigMaps' metadata, and the Gateway
// API client (JSON: custom resources have no protobuf) is made when a
// Gateway API kind is watched. When cfg sets neither QPS nor a rate
// limiter, QPS is 50 and Burst 100 instead of client-go's 5 and 10, which
// would make the first snapshot of a cluster with a thousand referenced
// Secrets take more than three minutes.
func NewForConfig(cfg *rest.Config, opts Options) (*Watch, error) {
	typed := rest.CopyConfig(cfg)
	if typed.QPS == 0 && typed.RateLimiter == nil {
		typed.QPS, typed.Burst = 50, 100
	}
	plain := rest.CopyConfig(typed)
	typed.ContentType = runtime.ContentTypeProtobuf
	typed.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	var clients Clients
	var err error
	if clients.Kube, err = kubernetes.NewForConfig(typed); err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	if clients.Metadata, err = metadata.NewForConfig(plain); err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	if watchesGatewayAPI(opts.Kinds) {
		if clients.Gateway, err = gatewayclient.NewForConfig(plain); err != nil {
			return nil, fmt.Errorf("gateway API client: %w", err)
		}
	}
	return NewWatch(clients, opts)
}

// NewWatch returns a Watch that reads objects with clients. Nothing runs
// before Start. It fails when a kind is unknown, or is a Gateway API kind
// and clients has no Gateway client.
func NewWatch(clients Clients, opts Options) (*Watch, error) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.References == nil {
		opts.References = func(*snapshot.Snapshot) snapshot.Refs { return snapshot.Refs{} }
	}
	w := &Watch{opts: opts, changed: make(chan struct{}, 1)}
	w.factory = informers.NewSharedInformerFactoryWithOptions(clients.Kube, 0,
		informers.WithNamespace(opts.Namespace), informers.WithTransform(trim))
	if watchesGatewayAPI(opts.Kinds) {
		if clients.Gateway == nil {
			return nil, errors.New("watching the Gateway API needs a Gateway API client")
		}
		w.gatewayFactory = gatewayinformers.NewSharedInformerFactoryWithOptions(clients.Gateway, 0,
			gatewayinformers.WithNamespace(opts.Namespace), gatewayinformers.WithTransform(trim))
	}
	scope := "in all namespaces"
	if opts.Namespace != "" {
		scope = "in namespace " + opts.Namespace
	}
	kinds := append([]snapshot.Kind{services, endpointSlices}, opts.Kinds...)
	seen := map[snapshot.Kind]bool{}
	for _, k := range kinds {
		if seen[k] {
			continue
		}
		seen[k] = true
		desc, ok := kindInformers[k]
		if !ok {
			return nil, fmt.Errorf("no informer for kind %q", k)
		}
		informer := desc.informer(w)
		name := string(k)
		if !desc.clusterScoped {
			name += " " + scope
		}
		w.watched = append(w.watched, namedInformer{name, informer})
		w.handle(informer, desc.changed)
	}
	w.secrets = newRefCache(secretKind, clients.Kube, clients.Metadata, opts.Namespace, opts.ExtraSecrets, log, w.signal)
	w.configMaps = newRefCache(configMapKind, clients.Kube, clients.Metadata, opts.Namespace, nil, log, w.signal)
	return w, nil
}

// Informers names the Watch's informers, as WaitForSync does: those of
// the watched kinds, then those of Secrets' and ConfigMaps' metadata.
func (w *Watch) Informers() []string {
	var names []string
	for _, n := range w.all() {
		names = append(names, n.name)
	}
	return names
}

// all are every informer of the Watch.
func (w *Watch) all() []namedInformer {
	all := slices.Clone(w.watched)
	for _, src := range append(slices.Clone(w.secrets.sources), w.configMaps.sources...) {
		all = append(all, namedInformer{src.name, src.informer})
	}
	return all
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
	if w.gatewayFactory != nil {
		w.gatewayFactory.Start(ctx.Done())
	}
	w.secrets.start(ctx)
	w.configMaps.start(ctx)
}

// Wait waits for the informers started by Start to stop, after the
// context given to Start ended.
func (w *Watch) Wait() {
	w.factory.Shutdown()
	if w.gatewayFactory != nil {
		w.gatewayFactory.Shutdown()
	}
	w.secrets.wait()
	w.configMaps.wait()
}

// WaitForSync waits until every informer has synced (listed its objects
// once). When ctx ends first it returns an error naming the informers that
// did not sync, with ctx's error.
func (w *Watch) WaitForSync(ctx context.Context) error {
	var missing []string
	for _, n := range w.all() {
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

// Snapshot builds a snapshot from the informers' caches: every object of
// the watched kinds, Services and EndpointSlices, sorted, and the
// referenced Secrets and ConfigMaps (Options.References of those objects,
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
	snap := snapshot.New()
	for _, n := range w.watched {
		snap.AddAll(n.informer.GetStore().List())
	}
	refs := w.opts.References(snap)
	secretRefs := make(map[snapshot.Key]bool, len(refs.Secrets)+len(w.opts.ExtraSecrets))
	configMapRefs := make(map[snapshot.Key]bool, len(refs.ConfigMaps))
	addRefs(secretRefs, w.opts.ExtraSecrets)
	addRefs(secretRefs, refs.Secrets)
	addRefs(configMapRefs, refs.ConfigMaps)
	// The references are published before the metadata is read: an event
	// that lands after the read signals Changed.
	w.secrets.setReferenced(secretRefs)
	w.configMaps.setReferenced(configMapRefs)
	secrets, secretsErr := w.secrets.load(ctx, secretRefs)
	configMaps, configMapsErr := w.configMaps.load(ctx, configMapRefs)
	snap.Secrets = make(map[snapshot.Key]*corev1.Secret, len(secrets))
	for _, s := range secrets {
		snap.Add(s)
	}
	for _, c := range configMaps {
		snap.Add(c)
	}
	snap.Sort()
	return snap, errors.Join(secretsErr, configMapsErr)
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
