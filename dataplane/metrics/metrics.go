// Package metrics defines ramjetd's Prometheus metrics. A Metrics value owns
// its registry, so tests and several daemons in one process never share
// state. Request-path metrics are resolved to their label values when a
// configuration is compiled, so serving a request costs atomic additions
// only.
package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// StatusClasses are the label values of response status classes, indexed
// by status/100 (0 for anything out of range).
var StatusClasses = [6]string{"other", "1xx", "2xx", "3xx", "4xx", "5xx"}

// ExternalAuthSources and ExternalAuthOutcomes are the label values of
// ramjet_external_auth_total, in the order of Metrics.ExternalAuth.
var (
	ExternalAuthSources  = [2]string{"service", "cache"}
	ExternalAuthOutcomes = [4]string{"allowed", "unauthorized", "forbidden", "failed"}
	// GlobalRateLimitOutcomes are the label values of
	// ramjet_global_rate_limit_requests_total, in the order of
	// Metrics.GlobalRateLimit (globalratelimit.Outcomes).
	GlobalRateLimitOutcomes = [4]string{"passed", "refused", "refused_cached", "failed_open"}
)

// Metrics holds every metric of ramjetd.
type Metrics struct {
	Registry *prometheus.Registry

	requests        *prometheus.CounterVec
	upstreamLatency *prometheus.HistogramVec
	passConns       *prometheus.CounterVec
	passBytes       *prometheus.CounterVec

	// InFlight counts requests being served.
	InFlight prometheus.Gauge
	// Reloads and ReloadFailures count configuration loads.
	Reloads        prometheus.Counter
	ReloadFailures prometheus.Counter
	// Generation is the generation of the configuration serving.
	Generation prometheus.Gauge
	// LastReload is the Unix time of the last successful load.
	LastReload prometheus.Gauge
	// MemberUpdates counts PUT /v1/upstreams/{pool} by result.
	MemberUpdates *prometheus.CounterVec
	// SendTimeouts counts answers cut by server.limits.send_timeout.
	SendTimeouts prometheus.Counter
	// LingeringCloses counts lingering closes by how they ended (the
	// label values of listener.LingerEnd).
	LingeringCloses *prometheus.CounterVec
	// ExternalAuth counts the outcomes of external authentication, by
	// source, indexed like ExternalAuthSources and ExternalAuthOutcomes;
	// every series exists from the start.
	ExternalAuth *[2][4]prometheus.Counter
	// GlobalRateLimit counts the requests global rate limits judged, by
	// outcome, indexed like GlobalRateLimitOutcomes; every series exists
	// from the start.
	GlobalRateLimit *[4]prometheus.Counter

	// appCounters caches RequestCounters by tenant and application, so
	// that a reload of thousands of applications does not look up six
	// label sets for each (Forget drops the entries whose series it
	// deletes). Used at compile time only, never on the request path.
	mu          sync.Mutex
	appCounters map[[2]string]*[6]prometheus.Counter
}

// New creates the metrics in a fresh registry, with the Go runtime and
// process collectors.
func New() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ramjet_requests_total",
			Help: "Requests answered, by tenant, application and status class.",
		}, []string{"tenant", "application", "class"}),
		upstreamLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ramjet_upstream_response_seconds",
			Help:    "Time from sending a request to a member to its response head, by pool.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"pool"}),
		InFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ramjet_requests_in_flight",
			Help: "Requests being served.",
		}),
		Reloads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ramjet_reloads_total",
			Help: "Configurations loaded successfully, the first one included.",
		}),
		ReloadFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ramjet_reload_failures_total",
			Help: "Configurations refused; the previous one kept serving.",
		}),
		Generation: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ramjet_config_generation",
			Help: "Generation of the configuration serving.",
		}),
		LastReload: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ramjet_config_last_reload_success_timestamp_seconds",
			Help: "Unix time of the last successful configuration load.",
		}),
		MemberUpdates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ramjet_member_updates_total",
			Help: "Member list updates through the admin API, by result.",
		}, []string{"result"}),
		SendTimeouts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ramjet_send_timeouts_total",
			Help: "Answers cut because the client took nothing for server.limits.send_timeout; the client's connection (HTTP/1.x) or stream (HTTP/2) and the member's connection were released.",
		}),
		LingeringCloses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ramjet_lingering_closes_total",
			Help: "Connections closed after an answer sent before the request body was read, by how the drain of the body ended: client_closed, quiet (nothing for lingering_timeout) or time_up (lingering_time).",
		}, []string{"end"}),
		passConns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ramjet_passthrough_connections_total",
			Help: "TLS connections spliced to a member undecrypted (ssl-passthrough), by tenant, application and result (spliced, or failed: no member could be connected to).",
		}, []string{"tenant", "application", "result"}),
		passBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ramjet_passthrough_bytes_total",
			Help: "Bytes of spliced TLS connections, by tenant, application and direction (in: from the client to the member, out: from the member to the client).",
		}, []string{"tenant", "application", "direction"}),
		appCounters: map[[2]string]*[6]prometheus.Counter{},
	}
	externalAuth := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ramjet_external_auth_total",
		Help: "Requests judged by external authentication, by outcome (allowed, unauthorized, forbidden, failed: the service could not judge and the client got 500) and source (service, cache).",
	}, []string{"source", "outcome"})
	m.ExternalAuth = new([2][4]prometheus.Counter)
	for i, source := range ExternalAuthSources {
		for j, outcome := range ExternalAuthOutcomes {
			m.ExternalAuth[i][j] = externalAuth.WithLabelValues(source, outcome)
		}
	}
	globalRateLimit := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ramjet_global_rate_limit_requests_total",
		Help: "Requests judged by global rate limits, by outcome: passed, refused (memcached's counts over the limit), refused_cached (a refusal remembered in this process), failed_open (memcached could not be used; the request passed uncounted).",
	}, []string{"outcome"})
	m.GlobalRateLimit = new([4]prometheus.Counter)
	for i, outcome := range GlobalRateLimitOutcomes {
		m.GlobalRateLimit[i] = globalRateLimit.WithLabelValues(outcome)
	}
	m.Registry.MustRegister(
		m.requests, m.upstreamLatency, m.passConns, m.passBytes, m.InFlight, m.Reloads, m.ReloadFailures,
		m.Generation, m.LastReload, m.MemberUpdates, m.SendTimeouts, m.LingeringCloses, externalAuth, globalRateLimit,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// RequestCounters returns the request counters of one application, one per
// status class, indexed like StatusClasses.
func (m *Metrics) RequestCounters(tenant, application string) *[6]prometheus.Counter {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := [2]string{tenant, application}
	if c := m.appCounters[key]; c != nil {
		return c
	}
	var c [6]prometheus.Counter
	for i, class := range StatusClasses {
		c[i] = m.requests.WithLabelValues(tenant, application, class)
	}
	m.appCounters[key] = &c
	return &c
}

// Passthrough are the counters of one application's spliced connections.
type Passthrough struct {
	Spliced, Failed prometheus.Counter
	In, Out         prometheus.Counter
}

// PassthroughCounters returns the spliced-connection counters of one
// application. Forget drops them with the application's request counters.
func (m *Metrics) PassthroughCounters(tenant, application string) *Passthrough {
	return &Passthrough{
		Spliced: m.passConns.WithLabelValues(tenant, application, "spliced"),
		Failed:  m.passConns.WithLabelValues(tenant, application, "failed"),
		In:      m.passBytes.WithLabelValues(tenant, application, "in"),
		Out:     m.passBytes.WithLabelValues(tenant, application, "out"),
	}
}

// UpstreamLatency returns the latency histogram of a pool.
func (m *Metrics) UpstreamLatency(pool string) prometheus.Observer {
	return m.upstreamLatency.WithLabelValues(pool)
}

// ClassIndex maps a status code to its index in StatusClasses.
func ClassIndex(status int) int {
	if c := status / 100; c >= 1 && c <= 5 {
		return c
	}
	return 0
}

// Forget deletes the series of applications and pools that the previous
// generation had and the new one has not, so that metrics do not grow with
// every name a configuration ever held.
func (m *Metrics) Forget(oldApps, newApps [][2]string, oldPools, newPools []string) {
	keep := map[[2]string]bool{}
	for _, a := range newApps {
		keep[a] = true
	}
	m.mu.Lock()
	for _, a := range oldApps {
		if !keep[a] {
			m.requests.DeletePartialMatch(prometheus.Labels{"tenant": a[0], "application": a[1]})
			m.passConns.DeletePartialMatch(prometheus.Labels{"tenant": a[0], "application": a[1]})
			m.passBytes.DeletePartialMatch(prometheus.Labels{"tenant": a[0], "application": a[1]})
			delete(m.appCounters, a)
		}
	}
	m.mu.Unlock()
	keepPool := map[string]bool{}
	for _, p := range newPools {
		keepPool[p] = true
	}
	for _, p := range oldPools {
		if !keepPool[p] {
			m.upstreamLatency.DeleteLabelValues(p)
		}
	}
}
