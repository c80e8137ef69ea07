package controller

import (
	"context"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// ReportingController names Ramjet in the Events it writes.
const ReportingController = "ramjet.dev/ingress"

// Events reports findings as events.k8s.io/v1 Warning Events on their
// objects, each once while it lasts: a finding is reported again only after
// it went away, or after a leader change (the new leader starts afresh).
// Messages are the findings', which never hold Secret data and cut user
// values.
type Events struct {
	recorder events.EventRecorder
	// seen holds each object's findings of the last report.
	seen map[core.Origin]map[findingKey]bool
}

type findingKey struct {
	reason  core.Reason
	message string
}

// NewEvents starts an Event broadcaster writing to the API server until
// ctx ends.
func NewEvents(ctx context.Context, client kubernetes.Interface) (*Events, error) {
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	if err := broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
		return nil, err
	}
	go func() {
		<-ctx.Done()
		broadcaster.Shutdown()
	}()
	return &Events{recorder: broadcaster.NewRecorder(scheme.Scheme, ReportingController),
		seen: map[core.Origin]map[findingKey]bool{}}, nil
}

// Report writes an Event for every finding on an Ingress that is new since
// the last report (the loop logs the findings on other objects).
func (e *Events) Report(_ context.Context, o Outcome) {
	ingresses := make(map[snapshot.Key]*networkingv1.Ingress, len(o.Snapshot.Ingresses))
	for _, ing := range o.Snapshot.Ingresses {
		ingresses[snapshot.Key{Namespace: ing.Namespace, Name: ing.Name}] = ing
	}
	current := map[core.Origin]map[findingKey]bool{}
	for _, f := range o.Output.Findings {
		ing := ingresses[snapshot.Key{Namespace: f.Object.Namespace, Name: f.Object.Name}]
		if f.Object.Kind != "Ingress" || ing == nil {
			continue
		}
		key := findingKey{f.Reason, f.Message}
		if current[f.Object] == nil {
			current[f.Object] = map[findingKey]bool{}
		}
		current[f.Object][key] = true
		if !e.seen[f.Object][key] {
			e.recorder.Eventf(ing, nil, "Warning", string(f.Reason), "Translate", "%s", f.Message)
		}
	}
	e.seen = current
}

// Forget drops what was reported: after this replica lost the lead, the
// leader that follows reports afresh, and so does this one if it leads
// again.
func (e *Events) Forget() { e.seen = map[core.Origin]map[findingKey]bool{} }
