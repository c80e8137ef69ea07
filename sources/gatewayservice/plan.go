package gatewayservice

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// Plan is what to write so that the Services match the Gateways.
type Plan struct {
	// Create and Update are the Services to create and to update (each
	// update is the current object, resourceVersion included, with
	// Ramjet's fields changed).
	Create, Update []*corev1.Service
	// Delete are Ramjet's Services whose Gateway is gone.
	Delete []snapshot.Key
	// Problems are what kept a Gateway from getting all it asked for.
	Problems []Problem
}

// Empty reports whether the plan writes nothing.
func (p Plan) Empty() bool {
	return len(p.Create) == 0 && len(p.Update) == 0 && len(p.Delete) == 0
}

// ProblemReason says what a Problem is.
type ProblemReason string

// The problems of a Gateway.
const (
	// PortsExhausted: the port range had no free pod port for some of the
	// Gateway's ports (Problem.Ports), which its Service leaves out; a
	// Gateway none of whose ports got one has no Service.
	PortsExhausted ProblemReason = "PortsExhausted"
	// NameTaken: a Service that is not this controller's holds the name
	// of the Gateway's Service, so the Gateway has none.
	NameTaken ProblemReason = "NameTaken"
	// InfrastructureIgnored: a label or annotation of the Gateway's
	// spec.infrastructure was not copied onto its Service (a key Ramjet
	// reserves, or an invalid key or value); the Service is made without
	// it.
	InfrastructureIgnored ProblemReason = "InfrastructureIgnored"
)

// Problem is one thing a Gateway did not get.
type Problem struct {
	Gateway snapshot.Key
	Reason  ProblemReason
	// Ports are the Gateway ports without a pod port (PortsExhausted).
	Ports []int32
	// Message says what happened in a sentence for a condition; user
	// values in it are quoted and cut.
	Message string
}
