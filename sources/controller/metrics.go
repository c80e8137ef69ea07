package controller

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/ramjet-dev/ramjet/core"
)

// Metrics are the controller's metrics (seed 002 "Metrics and health",
// prefix ramjet_ingress_), in a registry of their own.
type Metrics struct {
	Registry *prometheus.Registry

	syncs          *prometheus.CounterVec
	reloadFailures prometheus.Counter
	lastSuccess    prometheus.Gauge
	objects        *prometheus.GaugeVec
	memberUpdates  *prometheus.CounterVec
	publishLatency prometheus.Histogram
}

// NewMetrics registers the metrics, with the Go runtime's and the
// process's.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ramjet_ingress_syncs_total", Help: "Synchronisations with ramjetd, by result (ok, error).",
		}, []string{"result"}),
		reloadFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ramjet_ingress_reload_failures_total", Help: "Reloads of ramjetd that failed or were refused.",
		}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ramjet_ingress_last_success_timestamp_seconds", Help: "Unix time of the last successful synchronisation.",
		}),
		objects: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ramjet_ingress_ingresses",
			Help: "Ingresses of this controller, by state: served, rejected, and unknown_class (naming an IngressClass that does not exist).",
		}, []string{"state"}),
		memberUpdates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ramjet_ingress_member_updates_total", Help: "Pool member updates sent to ramjetd, by result (ok, error).",
		}, []string{"result"}),
		publishLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ramjet_ingress_publish_latency_seconds",
			Help: "Time from a change seen in the API server to its publication to ramjetd (reload or member update).",
			// From 5 ms to about 20 s.
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 13),
		}),
	}
	m.Registry.MustRegister(m.syncs, m.reloadFailures, m.lastSuccess, m.objects, m.memberUpdates, m.publishLatency,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, result := range []string{"ok", "error"} {
		m.syncs.WithLabelValues(result)
		m.memberUpdates.WithLabelValues(result)
	}
	return m
}

// synced counts a rebuild that published.
func (m *Metrics) synced(at time.Time) {
	m.syncs.WithLabelValues("ok").Inc()
	m.alive(at)
}

// alive records a successful exchange with ramjetd (a rebuild, or a
// resync on a quiet cluster).
func (m *Metrics) alive(at time.Time) {
	m.lastSuccess.Set(float64(at.UnixNano()) / 1e9)
}

// memberUpdate counts the pools sent; a failed send counts one error.
func (m *Metrics) memberUpdate(sent int, err error) {
	m.memberUpdates.WithLabelValues("ok").Add(float64(sent))
	if err != nil {
		m.memberUpdates.WithLabelValues("error").Inc()
	}
}

// unknownClass is the ingresses gauge's state of the Ingresses that name
// an IngressClass that does not exist.
const unknownClass = "unknown_class"

// observeObjects sets the ingresses gauge from a rebuild's states and the
// number of Ingresses naming a class that does not exist.
func (m *Metrics) observeObjects(objects map[core.Origin]core.State, unknown int) {
	m.objects.WithLabelValues(unknownClass).Set(float64(unknown))
	counts := map[core.State]int{core.Served: 0, core.Rejected: 0}
	for o, s := range objects {
		if o.Kind == "Ingress" {
			counts[s]++
		}
	}
	for state, n := range counts {
		m.objects.WithLabelValues(string(state)).Set(float64(n))
	}
}
