package ingress

import (
	"fmt"
	"slices"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// ClassAnnotation is the deprecated class annotation.
const ClassAnnotation = "kubernetes.io/ingress.class"

// DefaultClassAnnotation marks the cluster's default IngressClass.
const DefaultClassAnnotation = "ingressclass.kubernetes.io/is-default-class"

// selectClass decides whether this controller serves an Ingress
// (DECISIONS.md "Class selection"):
//
//  1. spec.ingressClassName names an IngressClass whose controller is ours:
//     ours. A class that exists but is someone else's: not ours, silently. A
//     class that does not exist: not ours, reported (why).
//  2. No ingressClassName, the annotation set: ours if it equals
//     --ingress-class.
//  3. Neither: ours if one of our IngressClasses is the default class, or
//     with --watch-ingress-without-class.
//
// When both are set and name different controllers, rule 1 decides and
// classFinding says the annotation is ignored. Classes in
// opts.AssumeClasses are taken as ours (translate --assume-class).
func selectClass(snap *snapshot.Snapshot, ing *networkingv1.Ingress, opts Options) (ours bool, classFinding, why string) {
	annotation, hasAnnotation := ing.Annotations[ClassAnnotation]
	if name := ing.Spec.IngressClassName; name != nil && slices.Contains(opts.AssumeClasses, *name) ||
		ing.Spec.IngressClassName == nil && hasAnnotation && slices.Contains(opts.AssumeClasses, annotation) {
		return true, "", ""
	}
	if name := ing.Spec.IngressClassName; name != nil && *name != "" {
		class := snap.IngressClasses[*name]
		if class == nil {
			return false, "", fmt.Sprintf("spec.ingressClassName %s names no IngressClass", core.Quote(*name))
		}
		if class.Spec.Controller != opts.ControllerClass {
			return false, "", ""
		}
		if hasAnnotation && annotation != opts.IngressClass {
			return true, fmt.Sprintf("the annotation %s: %s names another class than spec.ingressClassName %s; the annotation is ignored",
				ClassAnnotation, core.Quote(annotation), core.Quote(*name)), ""
		}
		return true, "", ""
	}
	if hasAnnotation {
		return annotation == opts.IngressClass, "", ""
	}
	if opts.WatchWithoutClass || hasDefaultClass(snap, opts) {
		return true, "", ""
	}
	return false, "", ""
}

// hasDefaultClass reports whether one of our IngressClasses is the
// cluster's default.
func hasDefaultClass(snap *snapshot.Snapshot, opts Options) bool {
	for _, c := range snap.IngressClasses {
		if c.Spec.Controller == opts.ControllerClass && c.Annotations[DefaultClassAnnotation] == "true" {
			return true
		}
	}
	return false
}
