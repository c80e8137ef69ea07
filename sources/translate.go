// Package sources connects the controller's inputs to the core: it runs
// the enabled inputs (package input) over a snapshot and builds the
// configuration from their contributions, all inputs together, so that one
// ownership rule decides between their objects. The Kubernetes plumbing
// (informers, Events, status) is in its sub-packages.
package sources

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/sources/ingress"
	"github.com/ramjet-dev/ramjet/sources/input"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// Options are the controller's translation flags.
type Options struct {
	// Inputs are the enabled inputs with their options, run in this
	// order.
	Inputs []input.Input
	// Core are the merge and rendering options; its DefaultBackend is
	// filled from DefaultBackend.
	Core core.Options
	// DefaultBackend is --default-backend, "namespace/name:port".
	DefaultBackend string
	// DefaultSSLCertificate is --default-ssl-certificate, "namespace/name".
	DefaultSSLCertificate string
	// HTTPSListener names the listener of the base that serves HTTPS
	// (--https-listener).
	HTTPSListener string
	// AllowExternalName lets the default backend be an ExternalName
	// Service (--allow-external-name-services).
	AllowExternalName bool
}

// Kinds are the kinds the enabled inputs watch.
func (o Options) Kinds() []snapshot.Kind {
	var kinds []snapshot.Kind
	for _, in := range o.Inputs {
		kinds = append(kinds, in.Kinds()...)
	}
	return kinds
}

// References are the Secrets and ConfigMaps the enabled inputs' objects of
// snap reference.
func (o Options) References(snap *snapshot.Snapshot) snapshot.Refs {
	var refs snapshot.Refs
	for _, in := range o.Inputs {
		r := in.References(snap)
		refs.Secrets = append(refs.Secrets, r.Secrets...)
		refs.ConfigMaps = append(refs.ConfigMaps, r.ConfigMaps...)
	}
	return refs
}

// Output is a translation's result and the objects left aside.
type Output struct {
	*core.Result
	// Ignored are objects that are not this controller's but name a class
	// that does not exist.
	Ignored []input.Ignored
	// Inputs are the inputs' translations, by input name.
	Inputs map[string]*input.Translation
	// Problems are problems of the flags' objects (the default backend, the
	// default certificate), which belong to no Ingress.
	Problems []string
}

// ParseDefaultBackend checks --default-backend: "namespace/name:port",
// the port a number or a name.
func ParseDefaultBackend(s string) (snapshot.Key, networkingv1.ServiceBackendPort, error) {
	ref, portStr, ok := strings.Cut(s, ":")
	key, okKey := snapshot.ParseKey(ref)
	if !ok || !okKey || portStr == "" {
		return snapshot.Key{}, networkingv1.ServiceBackendPort{}, fmt.Errorf("--default-backend %q: want namespace/name:port", s)
	}
	if n, err := strconv.Atoi(portStr); err == nil {
		if n < 1 || n > 65535 {
			return snapshot.Key{}, networkingv1.ServiceBackendPort{}, fmt.Errorf("--default-backend %q: port must be 1..65535", s)
		}
		return key, networkingv1.ServiceBackendPort{Number: int32(n)}, nil
	}
	return key, networkingv1.ServiceBackendPort{Name: portStr}, nil
}

// Translate runs the enabled inputs over snap and builds the configuration
// on the server section of base. It is a pure function of its arguments.
func Translate(snap *snapshot.Snapshot, base *config.Server, opts Options) *Output {
	out := &Output{Inputs: make(map[string]*input.Translation, len(opts.Inputs))}
	var contributions []*core.Contribution
	for _, in := range opts.Inputs {
		t := in.Translate(snap)
		out.Inputs[in.Name()] = t
		contributions = append(contributions, t.Contributions...)
		out.Ignored = append(out.Ignored, t.Ignored...)
	}
	coreOpts := opts.Core
	if opts.DefaultBackend != "" {
		coreOpts.DefaultBackend = out.defaultBackend(snap, opts)
	}
	server, files := out.defaultCertificate(snap, base, opts)
	out.Result = core.Build(contributions, server, coreOpts)
	for name, content := range files {
		out.Files[name] = content
	}
	return out
}

func (o *Output) defaultBackend(snap *snapshot.Snapshot, opts Options) *core.Backend {
	key, port, err := ParseDefaultBackend(opts.DefaultBackend)
	if err != nil {
		o.Problems = append(o.Problems, err.Error())
		return nil
	}
	members, problems := ingress.Resolve(snap, key, port, ingress.ResolveOptions{AllowExternalName: opts.AllowExternalName})
	for _, problem := range problems {
		if len(members) == 0 {
			o.Problems = append(o.Problems, fmt.Sprintf("--default-backend %s: %s; it answers 503", opts.DefaultBackend, problem.Message))
		} else {
			o.Problems = append(o.Problems, fmt.Sprintf("--default-backend %s: %s", opts.DefaultBackend, problem.Message))
		}
	}
	portName := port.Name
	if portName == "" {
		portName = strconv.Itoa(int(port.Number))
	}
	return &core.Backend{Namespace: key.Namespace, Service: key.Name, Port: portName, Members: members}
}

// defaultCertificate puts the --default-ssl-certificate Secret on the HTTPS
// listener of a copy of base, with its files. Without the flag, or when the
// Secret cannot be used, the listener keeps the base's certificate (by
// default the one ramjetd generates).
func (o *Output) defaultCertificate(snap *snapshot.Snapshot, base *config.Server, opts Options) (*config.Server, map[string][]byte) {
	server := *base
	if opts.DefaultSSLCertificate == "" {
		return &server, nil
	}
	key, ok := snapshot.ParseKey(opts.DefaultSSLCertificate)
	if !ok {
		o.Problems = append(o.Problems, fmt.Sprintf("--default-ssl-certificate %q: want namespace/name", opts.DefaultSSLCertificate))
		return &server, nil
	}
	ln := base.Listeners[opts.HTTPSListener]
	if ln == nil {
		o.Problems = append(o.Problems, fmt.Sprintf("--https-listener %q: the base configuration has no such listener", opts.HTTPSListener))
		return &server, nil
	}
	cert, problem := ingress.LoadTLSSecret(snap, key)
	if cert == nil {
		o.Problems = append(o.Problems, fmt.Sprintf("--default-ssl-certificate %s: %s; the generated certificate is served", key, problem))
		return &server, nil
	}
	files := map[string][]byte{}
	certFile := core.FileName(cert.CertPEM, ".crt")
	keyFile := core.FileName(cert.KeyPEM, ".key")
	files[certFile], files[keyFile] = cert.CertPEM, cert.KeyPEM
	listeners := make(map[string]*config.Listener, len(base.Listeners))
	for name, l := range base.Listeners {
		listeners[name] = l
	}
	listeners[opts.HTTPSListener] = &config.Listener{Address: ln.Address, TLS: &config.ListenerTLS{
		CertFile: joinDir(opts.Core.FileDir, certFile), KeyFile: joinDir(opts.Core.FileDir, keyFile),
	}}
	server.Listeners = listeners
	return &server, files
}

func joinDir(dir, name string) string { return path.Join(dir, name) }
