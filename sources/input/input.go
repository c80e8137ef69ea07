// Package input is what an input of the controller is: a source of objects
// (Ingress, Gateway API) that names the kinds it watches, the Secrets and
// ConfigMaps its objects reference, and turns its objects of a snapshot
// into contributions. The controller runs the enabled inputs as a list
// (sources.Translate) and builds informers only for their kinds
// (sources/kube), so that a Gateway-only install watches no Ingress.
package input

import (
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// Input is one input, with its options.
type Input interface {
	// Name is the input's name in the registry (registry.Input), the flag
	// that enables it.
	Name() string
	// Kinds are the kinds of objects it watches.
	Kinds() []snapshot.Kind
	// References are the Secrets and ConfigMaps whose data translating the
	// input's objects of snap reads: the controller reads and keeps those
	// only. snap holds every watched object but no Secret or ConfigMap.
	References(snap *snapshot.Snapshot) snapshot.Refs
	// Translate turns the input's objects of snap into contributions. It
	// is a pure function of snap and the input's options.
	Translate(snap *snapshot.Snapshot) *Translation
}

// Translation is what an input made of a snapshot.
type Translation struct {
	Contributions []*core.Contribution
	// Ignored are objects left aside that are not this controller's but
	// name a class that does not exist (logged and counted, not reported
	// on the object).
	Ignored []Ignored
	// Detail is the input's own result, for its status reporter (the
	// Gateway API input's statuses); nil when it has none.
	Detail any
}

// Ignored is an object left aside, and why.
type Ignored struct {
	Kind   string
	Object snapshot.Key
	Reason string
}
