package ingress

import (
	"github.com/ramjet-dev/ramjet/sources/input"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// Input is the Ingress input with its options, as the controller runs it.
type Input struct{ Options Options }

var _ input.Input = (*Input)(nil)

// Name is the input's name, as --ingress enables it.
func (*Input) Name() string { return Name }

// Kinds are IngressClasses and Ingresses.
func (*Input) Kinds() []snapshot.Kind {
	return []snapshot.Kind{snapshot.IngressClasses, snapshot.Ingresses}
}

// References are the Secrets and ConfigMaps of the Ingresses this
// controller serves (ServedRefs).
func (in *Input) References(snap *snapshot.Snapshot) snapshot.Refs {
	var refs snapshot.Refs
	for _, ing := range snap.Ingresses {
		r := ServedRefs(snap, ing, in.Options)
		refs.Secrets = append(refs.Secrets, r.Secrets...)
		refs.ConfigMaps = append(refs.ConfigMaps, r.ConfigMaps...)
	}
	return refs
}

// Translate translates the Ingresses this controller serves.
func (in *Input) Translate(snap *snapshot.Snapshot) *input.Translation {
	contributions, ignored := Translate(snap, in.Options)
	return &input.Translation{Contributions: contributions, Ignored: ignored}
}
