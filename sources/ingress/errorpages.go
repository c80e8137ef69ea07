package ingress

import (
	"strconv"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/registry"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// errorPages resolves the default-backend annotation's Service to its
// first port, as ingress-nginx does. A Service that does not exist or has
// no port is reported and the key ignored: the error pages then go to the
// controller's default backend, as in ingress-nginx.
func (t *translation) errorPages() {
	ep := t.c.Settings.ErrorPages
	if ep == nil || ep.Service == "" {
		return
	}
	key := snapshot.Key{Namespace: t.ing.Namespace, Name: ep.Service}
	field := registry.Prefix + "default-backend"
	svc := t.snap.Services[key]
	switch {
	case svc == nil:
		t.note(core.ServiceNotFound, "%s: Service %s not found; the key is ignored%s", field, key, t.errorPagesElsewhere())
	case len(svc.Spec.Ports) == 0:
		t.note(core.ServiceNotFound, "%s: Service %s has no port; the key is ignored%s", field, key, t.errorPagesElsewhere())
	default:
		sp := svc.Spec.Ports[0]
		port := networkingv1.ServiceBackendPort{Name: sp.Name}
		portName := sp.Name
		if sp.Name == "" {
			port.Number, portName = sp.Port, strconv.Itoa(int(sp.Port))
		}
		members, problems := Resolve(t.snap, key, port, ResolveOptions{AllowExternalName: t.opts.AllowExternalName})
		for _, problem := range problems {
			if len(members) == 0 {
				t.note(problem.Reason, "%s: %s; while it has none, paths without endpoints answer 503 and error pages give the original answer", field, problem.Message)
			} else {
				t.note(problem.Reason, "%s: %s", field, problem.Message)
			}
		}
		ep.Backend = &core.Backend{Namespace: key.Namespace, Service: key.Name, Port: portName, Members: members}
		return
	}
	ep.Service = ""
	if len(ep.Statuses) == 0 {
		t.c.Settings.ErrorPages = nil
	}
}

// errorPagesElsewhere says where the object's custom-http-errors go
// without its default-backend.
func (t *translation) errorPagesElsewhere() string {
	if len(t.c.Settings.ErrorPages.Statuses) == 0 {
		return ""
	}
	return " (" + registry.Prefix + "custom-http-errors then goes to the controller's --default-backend, when it has one)"
}
