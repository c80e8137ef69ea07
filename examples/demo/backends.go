package main

import (
	"fmt"
	"log"
	"net/http"
	"strconv"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// namespace is the namespace of examples/ingress.
const namespace = "demo"

// backendSpec is one pod of the demo: its name, its Service (of
// examples/ingress/10-services.yaml) and whether it starts outside the
// Service's EndpointSlice (a spare pod for the scaling commands).
type backendSpec struct {
	name, service string
	spare         bool
}

var backendSpecs = []backendSpec{
	{"web-a", "web", false},
	{"web-b", "web", false},
	{"web-c", "web", true},
	{"web-v2", "web-v2", false},
	{"api", "api", false},
	{"admin", "admin", false},
}

// services lists the Services of backendSpecs, in order, once each.
func services() []string {
	var out []string
	for _, b := range backendSpecs {
		if len(out) == 0 || out[len(out)-1] != b.service {
			out = append(out, b.service)
		}
	}
	return out
}

// echo answers every request with one line saying which backend answered,
// the Host and path it received and the forwarding headers ramjetd added;
// the backend's name comes first so that `cut -d' ' -f1` counts backends.
// Each answer is also written to logger.
func echo(name string, logger *log.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line := describe(name, r)
		logger.Print(line)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Backend", name)
		fmt.Fprintln(w, line)
	})
}

// describe is the answer of backend name to r.
func describe(name string, r *http.Request) string {
	fields := []struct{ key, value string }{
		{"backend", name},
		{"host", r.Host},
		{"path", r.URL.RequestURI()},
		{"x-forwarded-for", r.Header.Get("X-Forwarded-For")},
		{"x-forwarded-host", r.Header.Get("X-Forwarded-Host")},
		{"x-forwarded-port", r.Header.Get("X-Forwarded-Port")},
		{"x-forwarded-proto", r.Header.Get("X-Forwarded-Proto")},
		{"x-real-ip", r.Header.Get("X-Real-Ip")},
	}
	parts := make([]string, len(fields))
	for i, f := range fields {
		v := f.value
		switch {
		case v == "":
			v = "-"
		case strings.ContainsAny(v, " \t\"\\"):
			v = strconv.Quote(v)
		}
		parts[i] = f.key + "=" + v
	}
	return strings.Join(parts, " ")
}

// field returns the value of key in an answer of describe ("" when absent).
func field(answer, key string) string {
	for part := range strings.FieldsSeq(answer) {
		if v, ok := strings.CutPrefix(part, key+"="); ok {
			return v
		}
	}
	return ""
}

// startBackends starts every backend of backendSpecs in network, each on an
// address of its own and port harness.BackendPort.
func startBackends(network *harness.Network, logger *log.Logger) (map[string]*harness.Backend, error) {
	out := map[string]*harness.Backend{}
	for _, b := range backendSpecs {
		be, err := network.Serve(b.name, echo(b.name, logger), nil)
		if err != nil {
			return nil, fmt.Errorf("backend %s: %w", b.name, err)
		}
		out[b.name] = be
	}
	return out, nil
}

// endpointSlices returns the EndpointSlice of every Service, with the
// addresses of its backends that are not spare, on the Services' port
// named http (there is no controller-manager to write them).
func endpointSlices(backends map[string]*harness.Backend) []*discoveryv1.EndpointSlice {
	var out []*discoveryv1.EndpointSlice
	for _, svc := range services() {
		var addrs []string
		for _, b := range backendSpecs {
			if b.service == svc && !b.spare {
				addrs = append(addrs, backends[b.name].IP)
			}
		}
		s := harness.EndpointSlice(namespace, svc, harness.BackendPort, addrs...)
		s.Ports[0].Name = new("http")
		out = append(out, s)
	}
	return out
}

// members describes a Service's backends for the demo's output:
// "web-a 198.18.7.2, web-b 198.18.7.3".
func members(backends map[string]*harness.Backend, svc string, spare bool) string {
	var parts []string
	for _, b := range backendSpecs {
		if b.service == svc && b.spare == spare {
			parts = append(parts, b.name+" "+backends[b.name].Addr)
		}
	}
	return strings.Join(parts, ", ")
}
