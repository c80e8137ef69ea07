package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ramjet-dev/ramjet/dataplane/upstream"
)

// upstreamCollector reports the counters of the pools serving now, read
// from their atomic counters at scrape time: nothing on the request path
// touches Prometheus for them, and members that are gone disappear.
type upstreamCollector struct {
	pools    func() map[string]*upstream.Pool
	members  *prometheus.Desc
	inFlight *prometheus.Desc
	requests *prometheus.Desc
	failures *prometheus.Desc
	retries  *prometheus.Desc
}

// WatchUpstreams registers the per-pool and per-member metrics of the pools
// that pools returns.
func (m *Metrics) WatchUpstreams(pools func() map[string]*upstream.Pool) {
	member := []string{"pool", "member"}
	m.Registry.MustRegister(&upstreamCollector{
		pools:    pools,
		members:  prometheus.NewDesc("ramjet_upstream_members", "Members of a pool.", []string{"pool"}, nil),
		inFlight: prometheus.NewDesc("ramjet_upstream_in_flight", "Requests in flight to a member.", member, nil),
		requests: prometheus.NewDesc("ramjet_upstream_requests_total", "Tries sent to a member (counted per member address).", member, nil),
		failures: prometheus.NewDesc("ramjet_upstream_failures_total", "Failed tries of a member: connect errors, timeouts, broken connections and 502/503/504 answers (counted per member address).", member, nil),
		retries:  prometheus.NewDesc("ramjet_upstream_retries_total", "Tries after the first, by pool.", []string{"pool"}, nil),
	})
}

func (c *upstreamCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.members
	ch <- c.inFlight
	ch <- c.requests
	ch <- c.failures
	ch <- c.retries
}

func (c *upstreamCollector) Collect(ch chan<- prometheus.Metric) {
	for name, p := range c.pools() {
		set := p.Members()
		ch <- prometheus.MustNewConstMetric(c.members, prometheus.GaugeValue, float64(set.Len()), name)
		ch <- prometheus.MustNewConstMetric(c.retries, prometheus.CounterValue, float64(p.Stats.Retries.Load()), name)
		for i := range set.Len() {
			m := set.Member(i)
			ch <- prometheus.MustNewConstMetric(c.inFlight, prometheus.GaugeValue, float64(m.Stats.InFlight.Load()), name, m.Address)
			ch <- prometheus.MustNewConstMetric(c.requests, prometheus.CounterValue, float64(m.Stats.Requests.Load()), name, m.Address)
			ch <- prometheus.MustNewConstMetric(c.failures, prometheus.CounterValue, float64(m.Stats.Failures.Load()), name, m.Address)
		}
	}
}
