package metrics

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/upstream"
)

func TestClassIndex(t *testing.T) {
	tests := []struct {
		status int
		want   int
	}{
		{-1, 0}, {0, 0}, {99, 0}, {100, 1}, {101, 1}, {199, 1}, {200, 2}, {204, 2},
		{301, 3}, {399, 3}, {404, 4}, {499, 4}, {500, 5}, {503, 5}, {599, 5}, {600, 0}, {999, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			if got := ClassIndex(tt.status); got != tt.want {
				t.Errorf("ClassIndex(%d) = %d (%s), want %d (%s)", tt.status, got, StatusClasses[got], tt.want, StatusClasses[tt.want])
			}
		})
	}
}

// series returns the series of one metric family as "label=value,..." →
// value (counter, gauge, or the sample count of a histogram), its labels
// sorted by name.
func series(t *testing.T, m *Metrics, family string) map[string]float64 {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
		for _, metric := range f.GetMetric() {
			var labels []string
			for _, l := range metric.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(labels)
			out[strings.Join(labels, ",")] = value(metric)
		}
	}
	return out
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return -1
}

func keys(m map[string]float64) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

func TestRequestCounters(t *testing.T) {
	m := New()
	c := m.RequestCounters("shop", "www")
	for i := range c {
		for range i + 1 {
			c[i].Inc()
		}
	}
	got := series(t, m, "ramjet_requests_total")
	want := map[string]float64{}
	for i, class := range StatusClasses {
		want["application=www,class="+class+",tenant=shop"] = float64(i + 1)
	}
	if len(got) != len(want) {
		t.Errorf("series = %q, want %q", keys(got), keys(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	// Asking again returns the same series.
	m.RequestCounters("shop", "www")[ClassIndex(200)].Inc()
	if got := series(t, m, "ramjet_requests_total")["application=www,class=2xx,tenant=shop"]; got != 4 {
		t.Errorf("2xx after a second RequestCounters and Inc = %v, want 4", got)
	}
}

func TestForget(t *testing.T) {
	m := New()
	apps := [][2]string{{"shop", "www"}, {"shop", "api"}, {"blog", "www"}}
	for _, a := range apps {
		m.RequestCounters(a[0], a[1])[2].Inc()
	}
	for _, p := range []string{"web", "api", "old"} {
		m.UpstreamLatency(p).Observe(0.01)
	}
	m.Forget(apps, [][2]string{{"shop", "www"}, {"blog", "www"}, {"new", "app"}},
		[]string{"web", "api", "old"}, []string{"web", "api", "fresh"})

	var gotApps []string
	for k := range series(t, m, "ramjet_requests_total") {
		if strings.Contains(k, "class=2xx") {
			gotApps = append(gotApps, k)
		}
	}
	sort.Strings(gotApps)
	wantApps := []string{"application=www,class=2xx,tenant=blog", "application=www,class=2xx,tenant=shop"}
	if !slices.Equal(gotApps, wantApps) {
		t.Errorf("request series after Forget = %q, want %q", gotApps, wantApps)
	}
	if n := len(series(t, m, "ramjet_requests_total")); n != 2*len(StatusClasses) {
		t.Errorf("request series after Forget: %d, want %d (every class of the two kept applications)", n, 2*len(StatusClasses))
	}
	gotPools := keys(series(t, m, "ramjet_upstream_response_seconds"))
	wantPools := []string{"pool=api", "pool=web"}
	if !slices.Equal(gotPools, wantPools) {
		t.Errorf("latency series after Forget = %q, want %q", gotPools, wantPools)
	}
	// An application forgotten and configured again counts in a series
	// that is exported (not in the deleted one a cache would keep).
	m.RequestCounters("shop", "api")[2].Inc()
	if got := series(t, m, "ramjet_requests_total")["application=api,class=2xx,tenant=shop"]; got != 1 {
		t.Errorf("shop/api 2xx after it came back = %v, want 1 (a fresh series)", got)
	}
}

func TestProcessMetricsRegistered(t *testing.T) {
	m := New()
	m.InFlight.Inc()
	m.Reloads.Inc()
	m.MemberUpdates.WithLabelValues("ok").Inc()
	for _, name := range []string{"ramjet_requests_in_flight", "ramjet_reloads_total", "ramjet_member_updates_total", "go_goroutines"} {
		if len(series(t, m, name)) == 0 {
			t.Errorf("no series of %s in the registry", name)
		}
	}
}

func TestWatchUpstreams(t *testing.T) {
	s := upstream.NewState()
	pools := map[string]*upstream.Pool{}
	for name, members := range map[string][]config.Member{
		"web":   {{Address: "127.0.0.1:1001"}, {Address: "127.0.0.1:1002", Weight: 3}},
		"api":   {{Address: "127.0.0.1:1002"}},
		"empty": nil,
	} {
		p, err := s.Build(name, &config.Pool{Members: members})
		if err != nil {
			t.Fatalf("Build(%s): %v", name, err)
		}
		pools[name] = p
	}
	s.Commit(pools, nil)
	web := pools["web"].Members()
	web.Member(0).Stats.Requests.Add(5)
	web.Member(0).Stats.Failures.Add(2)
	web.Member(0).Stats.InFlight.Add(1)
	web.Member(1).Stats.Requests.Add(7) // shared with api's member
	pools["web"].Stats.Retries.Add(3)

	m := New()
	m.WatchUpstreams(s.Pools)
	tests := []struct {
		family string
		want   map[string]float64
	}{
		{"ramjet_upstream_members", map[string]float64{"pool=web": 2, "pool=api": 1, "pool=empty": 0}},
		{"ramjet_upstream_retries_total", map[string]float64{"pool=web": 3, "pool=api": 0, "pool=empty": 0}},
		{"ramjet_upstream_requests_total", map[string]float64{
			"member=127.0.0.1:1001,pool=web": 5, "member=127.0.0.1:1002,pool=web": 7, "member=127.0.0.1:1002,pool=api": 7}},
		{"ramjet_upstream_failures_total", map[string]float64{
			"member=127.0.0.1:1001,pool=web": 2, "member=127.0.0.1:1002,pool=web": 0, "member=127.0.0.1:1002,pool=api": 0}},
		{"ramjet_upstream_in_flight", map[string]float64{
			"member=127.0.0.1:1001,pool=web": 1, "member=127.0.0.1:1002,pool=web": 0, "member=127.0.0.1:1002,pool=api": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.family, func(t *testing.T) {
			got := series(t, m, tt.family)
			if !slices.Equal(keys(got), keys(tt.want)) {
				t.Fatalf("series = %q, want %q", keys(got), keys(tt.want))
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s{%s} = %v, want %v", tt.family, k, got[k], v)
				}
			}
		})
	}

	// Members that are gone disappear at the next scrape.
	p2, err := s.Build("web", &config.Pool{Members: []config.Member{{Address: "127.0.0.1:1003"}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Commit(map[string]*upstream.Pool{"web": p2}, nil)
	got := keys(series(t, m, "ramjet_upstream_requests_total"))
	want := []string{"member=127.0.0.1:1003,pool=web"}
	if !slices.Equal(got, want) {
		t.Errorf("after a new generation: series = %q, want %q", got, want)
	}
}
