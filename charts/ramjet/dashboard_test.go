package ramjet_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// dashboardPath is the Grafana dashboard the chart ships in a ConfigMap.
const dashboardPath = "dashboards/ramjet.json"

// dashboardDatasourceUID is the datasource every panel, target and query
// variable names: the dashboard's datasource variable, never a fixed one.
const dashboardDatasourceUID = "${datasource}"

// dashboardScrapeLabels are the labels Prometheus adds to every series of
// the chart's ServiceMonitor, which the programs do not export themselves.
var dashboardScrapeLabels = []string{"namespace", "pod", "container", "job", "instance"}

// dashboard is the part of a Grafana dashboard that the tests read.
type dashboard struct {
	UID           string `json:"uid"`
	Title         string `json:"title"`
	Editable      bool   `json:"editable"`
	SchemaVersion int    `json:"schemaVersion"`
	Templating    struct {
		List []dashboardVariable `json:"list"`
	} `json:"templating"`
	Panels []dashboardPanel `json:"panels"`
}

// dashboardVariable is a template variable. Query is a string in the
// file; Grafana saves an object holding it when the variable is edited.
type dashboardVariable struct {
	Type       string               `json:"type"`
	Name       string               `json:"name"`
	Query      json.RawMessage      `json:"query"`
	Datasource *dashboardDatasource `json:"datasource"`
	Multi      bool                 `json:"multi"`
	IncludeAll bool                 `json:"includeAll"`
}

// dashboardPanel is a panel or a row (whose panels are nested when it is
// collapsed).
type dashboardPanel struct {
	ID          int                  `json:"id"`
	Type        string               `json:"type"`
	Title       string               `json:"title"`
	Datasource  *dashboardDatasource `json:"datasource"`
	Targets     []dashboardTarget    `json:"targets"`
	Panels      []dashboardPanel     `json:"panels"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
}

// dashboardTarget is one query of a panel.
type dashboardTarget struct {
	RefID      string               `json:"refId"`
	Expr       string               `json:"expr"`
	Datasource *dashboardDatasource `json:"datasource"`
}

// dashboardDatasource is a reference to a datasource.
type dashboardDatasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

func (d *dashboardDatasource) String() string {
	if d == nil {
		return "none"
	}
	return d.Type + "/" + d.UID
}

// dashboardPromQL reports whether ds is the datasource variable.
func dashboardPromQL(ds *dashboardDatasource) bool {
	return ds != nil && ds.Type == "prometheus" && ds.UID == dashboardDatasourceUID
}

// dashboardLoad reads and decodes the dashboard.
func dashboardLoad(t *testing.T) dashboard {
	t.Helper()
	data, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	return d
}

// dashboardAllPanels lists the panels and rows, those of collapsed rows
// included, in order.
func dashboardAllPanels(panels []dashboardPanel) []dashboardPanel {
	var out []dashboardPanel
	for _, p := range panels {
		out = append(out, p)
		out = append(out, dashboardAllPanels(p.Panels)...)
	}
	return out
}

// dashboardVariableQuery is a query variable's query text.
func dashboardVariableQuery(v dashboardVariable) (string, error) {
	var text string
	if err := json.Unmarshal(v.Query, &text); err == nil {
		return text, nil
	}
	var saved struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(v.Query, &saved); err != nil {
		return "", fmt.Errorf("variable %s: query is neither a string nor an object with a query: %w", v.Name, err)
	}
	return saved.Query, nil
}

// dashboardLabelValues matches a label_values(selector, label) query.
var dashboardLabelValues = regexp.MustCompile(`^label_values\((.+),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)

// dashboardExpr is one PromQL expression of the dashboard: a target's, or
// the selector of a label_values variable with the label it lists.
type dashboardExpr struct {
	Where, Expr, Label string
}

// dashboardExprs lists every expression of the dashboard.
func dashboardExprs(t *testing.T, d dashboard) []dashboardExpr {
	t.Helper()
	var out []dashboardExpr
	for _, p := range dashboardAllPanels(d.Panels) {
		for _, target := range p.Targets {
			out = append(out, dashboardExpr{Where: fmt.Sprintf("panel %q target %s", p.Title, target.RefID), Expr: target.Expr})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		query, err := dashboardVariableQuery(v)
		if err != nil {
			t.Fatal(err)
		}
		m := dashboardLabelValues.FindStringSubmatch(query)
		if m == nil {
			t.Fatalf("variable %s: query %q, want label_values(selector, label)", v.Name, query)
		}
		out = append(out, dashboardExpr{Where: "variable " + v.Name, Expr: m[1], Label: m[2]})
	}
	return out
}

// TestDashboardStructure checks the dashboard's shape: identity, the
// template variables, and panels that all read the datasource variable,
// have a title, a unit and queries, and filter by namespace and pod.
func TestDashboardStructure(t *testing.T) {
	d := dashboardLoad(t)
	if d.UID != "ramjet" || d.Title != "Ramjet" || !d.Editable || d.SchemaVersion < 39 {
		t.Errorf("got uid %q, title %q, editable %v, schemaVersion %d; want ramjet, Ramjet, true, 39 or more",
			d.UID, d.Title, d.Editable, d.SchemaVersion)
	}
	dashboardCheckVariables(t, d.Templating.List)
	ids := map[int]string{}
	for _, p := range dashboardAllPanels(d.Panels) {
		if other, dup := ids[p.ID]; dup {
			t.Errorf("panels %q and %q have the same id %d", other, p.Title, p.ID)
		}
		ids[p.ID] = p.Title
		if p.Title == "" {
			t.Errorf("panel %d has no title", p.ID)
		}
		if p.Type != "row" {
			dashboardCheckPanel(t, p)
		}
	}
	for _, e := range dashboardExprs(t, d) {
		q, err := dashboardScan(e.Expr)
		if err != nil {
			t.Errorf("%s: %v", e.Where, err)
			continue
		}
		for _, r := range q.Ranges {
			if r != "$__rate_interval" {
				t.Errorf("%s: range [%s], want [$__rate_interval]", e.Where, r)
			}
		}
		if e.Label == "" {
			dashboardCheckFilters(t, e, q)
		}
	}
}

// dashboardCheckVariables checks the template variables: the datasource
// variable, and namespace, pod, application and pool read with
// label_values from it (pod, application and pool several at once).
func dashboardCheckVariables(t *testing.T, vars []dashboardVariable) {
	t.Helper()
	want := []struct {
		name  string
		multi bool
	}{{"namespace", false}, {"pod", true}, {"application", true}, {"pool", true}}
	byName := map[string]dashboardVariable{}
	for _, v := range vars {
		byName[v.Name] = v
	}
	if ds, ok := byName["datasource"]; !ok || ds.Type != "datasource" || string(ds.Query) != `"prometheus"` {
		t.Errorf("got datasource variable %+v, want one of type datasource with query prometheus", ds)
	}
	for _, w := range want {
		v, ok := byName[w.name]
		if !ok {
			t.Errorf("no variable %s", w.name)
			continue
		}
		if v.Type != "query" || !dashboardPromQL(v.Datasource) || v.Multi != w.multi || v.IncludeAll != w.multi {
			t.Errorf("variable %s: got type %s, datasource %s, multi %v, includeAll %v; want query, prometheus/%s, %v, %v",
				w.name, v.Type, v.Datasource, v.Multi, v.IncludeAll, dashboardDatasourceUID, w.multi, w.multi)
		}
	}
}

// dashboardCheckPanel checks a panel other than a row.
func dashboardCheckPanel(t *testing.T, p dashboardPanel) {
	t.Helper()
	if p.Type != "timeseries" && p.Type != "stat" {
		t.Errorf("panel %q: type %s, want timeseries or stat", p.Title, p.Type)
	}
	if !dashboardPromQL(p.Datasource) {
		t.Errorf("panel %q: datasource %s, want prometheus/%s", p.Title, p.Datasource, dashboardDatasourceUID)
	}
	if p.FieldConfig.Defaults.Unit == "" {
		t.Errorf("panel %q has no unit", p.Title)
	}
	if len(p.Targets) == 0 {
		t.Errorf("panel %q has no target", p.Title)
	}
	refs := map[string]bool{}
	for _, target := range p.Targets {
		if target.Expr == "" || target.RefID == "" || refs[target.RefID] {
			t.Errorf("panel %q: target %q has expr %q; want a unique refId and an expr", p.Title, target.RefID, target.Expr)
		}
		refs[target.RefID] = true
		if !dashboardPromQL(target.Datasource) {
			t.Errorf("panel %q target %s: datasource %s, want prometheus/%s", p.Title, target.RefID, target.Datasource, dashboardDatasourceUID)
		}
	}
}

// dashboardCheckFilters checks that every selector of a panel's query
// keeps to the namespace and pods chosen.
func dashboardCheckFilters(t *testing.T, e dashboardExpr, q dashboardQuery) {
	t.Helper()
	for _, s := range q.Selectors {
		if s.Matchers["namespace"] != `="$namespace"` || s.Matchers["pod"] != `=~"$pod"` {
			t.Errorf("%s: %s selects namespace%s, pod%s; want namespace=\"$namespace\", pod=~\"$pod\"",
				e.Where, s.Metric, s.Matchers["namespace"], s.Matchers["pod"])
		}
	}
}

// TestDashboardMetricsExported checks the dashboard against the metrics
// that a real ramjetd and ramjet-ingress export, scraped from a pod that
// served an Ingress: every metric the dashboard reads is a family one of
// them exports, every label it selects or groups by is a label of that
// family (or one Prometheus adds when it scrapes), and every family named
// ramjet_ is on the dashboard.
func TestDashboardMetricsExported(t *testing.T) {
	d := dashboardLoad(t)
	families := dashboardExportedFamilies(t)
	used := map[string]bool{}
	for _, e := range dashboardExprs(t, d) {
		q, err := dashboardScan(e.Expr)
		if err != nil {
			t.Fatalf("%s: %v", e.Where, err)
		}
		for _, name := range dashboardCheckLabels(t, e, q, families) {
			used[name] = true
		}
	}
	for name := range families {
		if strings.HasPrefix(name, "ramjet_") && !used[name] {
			t.Errorf("%s is exported but not on the dashboard", name)
		}
	}
}

// dashboardCheckLabels checks the metrics and labels of one expression
// and returns the families it reads. A label it groups by must be a label
// of every metric it reads.
func dashboardCheckLabels(t *testing.T, e dashboardExpr, q dashboardQuery, families map[string]dashboardFamily) []string {
	t.Helper()
	grouping := q.Grouping
	if e.Label != "" {
		grouping = append(grouping, e.Label)
	}
	var read []string
	for _, s := range q.Selectors {
		name, labels, err := dashboardSeries(families, s.Metric)
		if err != nil {
			t.Errorf("%s: %v", e.Where, err)
			continue
		}
		read = append(read, name)
		for label := range s.Matchers {
			if !labels[label] {
				t.Errorf("%s: %s has no label %s; it has %v", e.Where, s.Metric, label, slices.Sorted(maps.Keys(labels)))
			}
		}
		for _, label := range grouping {
			if !labels[label] {
				t.Errorf("%s: groups or lists by %s, which %s does not have; it has %v", e.Where, label, s.Metric, slices.Sorted(maps.Keys(labels)))
			}
		}
	}
	return read
}

// dashboardFamily is a metric family as exported: its type and the label
// names its samples carry.
type dashboardFamily struct {
	Type   dto.MetricType
	Labels map[string]bool
}

// dashboardSeries finds the family of a series name (a histogram's
// _bucket, _sum and _count series are its family's) and returns the
// family's name and the labels that series has, those added by the
// scrape included.
func dashboardSeries(families map[string]dashboardFamily, series string) (string, map[string]bool, error) {
	lookup := func(name string, types ...dto.MetricType) (map[string]bool, bool) {
		f, ok := families[name]
		if !ok || !slices.Contains(types, f.Type) {
			return nil, false
		}
		labels := map[string]bool{}
		for l := range f.Labels {
			labels[l] = true
		}
		for _, l := range dashboardScrapeLabels {
			labels[l] = true
		}
		return labels, true
	}
	if labels, ok := lookup(series, dto.MetricType_COUNTER, dto.MetricType_GAUGE, dto.MetricType_UNTYPED); ok {
		return series, labels, nil
	}
	if name, ok := strings.CutSuffix(series, "_bucket"); ok {
		if labels, ok := lookup(name, dto.MetricType_HISTOGRAM); ok {
			labels["le"] = true
			return name, labels, nil
		}
	}
	for _, suffix := range []string{"_sum", "_count"} {
		if name, ok := strings.CutSuffix(series, suffix); ok {
			if labels, ok := lookup(name, dto.MetricType_HISTOGRAM, dto.MetricType_SUMMARY); ok {
				return name, labels, nil
			}
		}
	}
	return "", nil, fmt.Errorf("neither ramjetd nor ramjet-ingress exports a series %s", series)
}

// dashboardExportedFamilies runs an ingress pod of Ramjet against a real
// API server, sends it traffic that makes every metric appear, and
// returns the families both programs export.
func dashboardExportedFamilies(t *testing.T) map[string]dashboardFamily {
	c := harness.StartAPIServer(t)
	network := harness.NewNetwork(t)
	first, second := network.Backend(t, "first", nil), network.Backend(t, "second", nil)
	c.Apply(t, dashboardObjects)
	ctx := t.Context()
	if _, err := c.Client.CoreV1().Services("dashboard").Create(ctx, harness.Service("dashboard", "web", 80, harness.BackendPort), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	endpointSlices := c.Client.DiscoveryV1().EndpointSlices("dashboard")
	if _, err := endpointSlices.Create(ctx, harness.EndpointSlice("dashboard", "web", harness.BackendPort, first.IP), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := harness.StartRamjet(t, c, harness.RamjetOptions{})
	client := r.Client(nil)
	dashboardEventually(t, "the Ingress is served", func() error { return dashboardGet(client, "http://web.dashboard.test/", "first\n") })

	// A member-only change goes over the member channel (PUT
	// /v1/upstreams/{pool}), an answer sent before the request body was
	// read ends in a lingering close: the two families that appear only
	// when it happens.
	if _, err := endpointSlices.Update(ctx, harness.EndpointSlice("dashboard", "web", harness.BackendPort, first.IP, second.IP), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := dashboardEarlyAnswer(r.HTTP); err != nil {
		t.Fatal(err)
	}
	ramjetd := dashboardScrapeUntil(t, r.Health, "ramjet_member_updates_total", "ramjet_lingering_closes_total")
	controller := dashboardScrapeUntil(t, r.Controller, "ramjet_ingress_ingresses")
	for name, f := range controller {
		ramjetd[name] = f
	}
	return ramjetd
}

// dashboardObjects are the IngressClass, the namespace and the Ingress of
// TestDashboardMetricsExported.
const dashboardObjects = `
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
---
apiVersion: v1
kind: Namespace
metadata: {name: dashboard}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: dashboard}
spec:
  ingressClassName: ramjet
  rules:
    - host: web.dashboard.test
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
`

// dashboardGet checks that url answers 200 with body.
func dashboardGet(client *http.Client, url, body string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || string(got) != body {
		return fmt.Errorf("got %d %q, want 200 %q", resp.StatusCode, got, body)
	}
	return nil
}

// dashboardEarlyAnswer sends ramjetd's listener addr a request for a host
// nobody serves that declares a body it never sends, reads the 404, and
// closes: ramjetd drains the connection until then (a lingering close).
func dashboardEarlyAnswer(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return err
	}
	if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: unknown.invalid\r\nContent-Length: 1\r\n\r\n"); err != nil {
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return fmt.Errorf("reading the early answer: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		return fmt.Errorf("early answer: got %d, want 404", resp.StatusCode)
	}
	return nil
}

// dashboardScrapeUntil scrapes http://addr/metrics until it has the
// families named want, and returns every family it has then.
func dashboardScrapeUntil(t *testing.T, addr string, want ...string) map[string]dashboardFamily {
	t.Helper()
	var families map[string]dashboardFamily
	dashboardEventually(t, addr+"/metrics has "+strings.Join(want, ", "), func() error {
		var err error
		if families, err = dashboardScrape(addr); err != nil {
			return err
		}
		for _, name := range want {
			if _, ok := families[name]; !ok {
				return fmt.Errorf("no %s yet", name)
			}
		}
		return nil
	})
	return families
}

// dashboardScrape reads the families of http://addr/metrics.
func dashboardScrape(addr string) (map[string]dashboardFamily, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics: got %s, want 200", resp.Status)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	parsed, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parsing /metrics: %w", err)
	}
	families := map[string]dashboardFamily{}
	for name, mf := range parsed {
		f := dashboardFamily{Type: mf.GetType(), Labels: map[string]bool{}}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				f.Labels[l.GetName()] = true
			}
		}
		families[name] = f
	}
	return families, nil
}

// dashboardEventually calls check until it succeeds, failing t with its
// last error after 30 seconds.
func dashboardEventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting until %s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// dashboardQuery is what a PromQL expression reads: its series selectors,
// the label names of its by, without, on, ignoring, group_left and
// group_right clauses, and the contents of its range brackets.
type dashboardQuery struct {
	Selectors []dashboardSelector
	Grouping  []string
	Ranges    []string
}

// dashboardSelector is a series selector: a metric name and its label
// matchers, each an operator and a quoted value by label name
// (`=~"$pod"`).
type dashboardSelector struct {
	Metric   string
	Matchers map[string]string
}

// dashboardGroupingWords are the PromQL keywords that take a list of label
// names in parentheses.
var dashboardGroupingWords = []string{"by", "without", "on", "ignoring", "group_left", "group_right"}

// dashboardOperatorWords are PromQL's aggregation operators and the other
// keywords that are neither metrics nor functions.
var dashboardOperatorWords = []string{
	"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
	"bottomk", "topk", "quantile", "limitk", "limit_ratio",
	"and", "or", "unless", "atan2", "bool", "offset", "inf", "nan",
}

// dashboardTokenKind is the kind of a dashboardToken.
type dashboardTokenKind int

const (
	// dashboardOther is a number, a string, a Grafana variable, an
	// operator or a comma.
	dashboardOther dashboardTokenKind = iota
	dashboardIdent
	dashboardMatchers
	dashboardRange
	dashboardOpen
	dashboardClose
)

// dashboardToken is a lexical token of PromQL: its text, and the
// matchers of a selector's braces.
type dashboardToken struct {
	kind     dashboardTokenKind
	text     string
	matchers map[string]string
}

// dashboardScan finds the selectors, grouping labels and ranges of a
// PromQL expression (Grafana variables allowed where a number or a
// string may be). An identifier is a metric unless a "(" follows it (a
// function) or it is a keyword.
func dashboardScan(expr string) (dashboardQuery, error) {
	toks, err := dashboardLex(expr)
	if err != nil {
		return dashboardQuery{}, fmt.Errorf("%q: %w", expr, err)
	}
	var q dashboardQuery
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		followedBy := func(kind dashboardTokenKind) bool { return i+1 < len(toks) && toks[i+1].kind == kind }
		switch {
		case tok.kind == dashboardRange:
			q.Ranges = append(q.Ranges, tok.text)
		case tok.kind == dashboardMatchers:
			return dashboardQuery{}, fmt.Errorf("%q: a selector without a metric name", expr)
		case tok.kind != dashboardIdent:
		case slices.Contains(dashboardGroupingWords, tok.text):
			if followedBy(dashboardOpen) {
				labels, end, err := dashboardLabelList(toks, i+2)
				if err != nil {
					return dashboardQuery{}, fmt.Errorf("%q: %s: %w", expr, tok.text, err)
				}
				q.Grouping = append(q.Grouping, labels...)
				i = end
			}
		case followedBy(dashboardOpen) || slices.Contains(dashboardOperatorWords, tok.text):
		default:
			s := dashboardSelector{Metric: tok.text}
			if followedBy(dashboardMatchers) {
				s.Matchers = toks[i+1].matchers
				i++
			}
			q.Selectors = append(q.Selectors, s)
		}
	}
	return q, nil
}

// dashboardLabelList reads label names separated by commas from
// toks[start:] up to a ")", and returns them with the index of the ")".
func dashboardLabelList(toks []dashboardToken, start int) ([]string, int, error) {
	var labels []string
	for i := start; i < len(toks); i++ {
		switch tok := toks[i]; {
		case tok.kind == dashboardClose:
			return labels, i, nil
		case tok.kind == dashboardIdent:
			labels = append(labels, tok.text)
		case tok.text != ",":
			return nil, 0, fmt.Errorf("%q in a list of label names", tok.text)
		}
	}
	return nil, 0, errors.New("a list of label names without its )")
}

// dashboardLex splits a PromQL expression into tokens.
func dashboardLex(expr string) ([]dashboardToken, error) {
	var toks []dashboardToken
	for i := 0; i < len(expr); {
		c := expr[i]
		end, tok := i+1, dashboardToken{}
		var err error
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
			continue
		case dashboardIdentStart(c):
			end = dashboardWordEnd(expr, i)
			tok = dashboardToken{kind: dashboardIdent, text: expr[i:end]}
		case c >= '0' && c <= '9' || c == '.':
			end = dashboardNumberEnd(expr, i)
		case c == '$':
			end, err = dashboardVariableEnd(expr, i)
		case c == '"' || c == '\'' || c == '`':
			end, err = dashboardStringEnd(expr, i)
		case c == '[':
			end = strings.IndexByte(expr[i:], ']') + i + 1
			if end == i {
				return nil, errors.New("a [ without its ]")
			}
			tok = dashboardToken{kind: dashboardRange, text: expr[i+1 : end-1]}
		case c == '{':
			tok = dashboardToken{kind: dashboardMatchers}
			tok.matchers, end, err = dashboardLexMatchers(expr, i+1)
		case c == '(':
			tok = dashboardToken{kind: dashboardOpen, text: "("}
		case c == ')':
			tok = dashboardToken{kind: dashboardClose, text: ")"}
		}
		if err != nil {
			return nil, err
		}
		if tok.kind == dashboardOther {
			tok.text = expr[i:end]
		}
		toks = append(toks, tok)
		i = end
	}
	return toks, nil
}

// dashboardLexMatchers reads label matchers from expr[start:] up to the
// "}" that closes them, and returns them with the index after it.
func dashboardLexMatchers(expr string, start int) (map[string]string, int, error) {
	matchers := map[string]string{}
	i := start
	for {
		i = dashboardSkipSpace(expr, i)
		if i < len(expr) && expr[i] == '}' {
			return matchers, i + 1, nil
		}
		if i >= len(expr) || !dashboardIdentStart(expr[i]) {
			return nil, 0, fmt.Errorf("a label name expected at offset %d", i)
		}
		nameEnd := dashboardWordEnd(expr, i)
		name := expr[i:nameEnd]
		i = dashboardSkipSpace(expr, nameEnd)
		op := ""
		for _, candidate := range []string{"=~", "!~", "!=", "="} {
			if strings.HasPrefix(expr[i:], candidate) {
				op = candidate
				break
			}
		}
		if op == "" {
			return nil, 0, fmt.Errorf("label %s: a matching operator expected at offset %d", name, i)
		}
		i = dashboardSkipSpace(expr, i+len(op))
		if i >= len(expr) || !strings.ContainsRune("\"'`", rune(expr[i])) {
			return nil, 0, fmt.Errorf("label %s: a quoted value expected at offset %d", name, i)
		}
		valueEnd, err := dashboardStringEnd(expr, i)
		if err != nil {
			return nil, 0, fmt.Errorf("label %s: %w", name, err)
		}
		matchers[name] = op + expr[i:valueEnd]
		i = dashboardSkipSpace(expr, valueEnd)
		if i < len(expr) && expr[i] == ',' {
			i++
		}
	}
}

func dashboardIdentStart(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func dashboardIdentPart(c byte) bool { return dashboardIdentStart(c) || c >= '0' && c <= '9' }

// dashboardWordEnd is the index after the identifier that starts at i.
func dashboardWordEnd(expr string, i int) int {
	for i < len(expr) && dashboardIdentPart(expr[i]) {
		i++
	}
	return i
}

// dashboardNumberEnd is the index after the number (or duration) that
// starts at i, exponents with a sign included.
func dashboardNumberEnd(expr string, i int) int {
	for i++; i < len(expr); i++ {
		c := expr[i]
		sign := (c == '+' || c == '-') && (expr[i-1] == 'e' || expr[i-1] == 'E')
		if !dashboardIdentPart(c) && c != '.' && !sign {
			break
		}
	}
	return i
}

// dashboardVariableEnd is the index after the Grafana variable ($name or
// ${name}) that starts at i.
func dashboardVariableEnd(expr string, i int) (int, error) {
	if strings.HasPrefix(expr[i:], "${") {
		end := strings.IndexByte(expr[i:], '}')
		if end < 0 {
			return 0, errors.New("a ${ without its }")
		}
		return i + end + 1, nil
	}
	return dashboardWordEnd(expr, i+1), nil
}

// dashboardStringEnd is the index after the string literal that starts
// at i: "..." or '...' with backslash escapes, or `...`.
func dashboardStringEnd(expr string, i int) (int, error) {
	quote := expr[i]
	for j := i + 1; j < len(expr); j++ {
		switch {
		case expr[j] == '\\' && quote != '`':
			j++
		case expr[j] == quote:
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("a string at offset %d without its closing %c", i, quote)
}

func dashboardSkipSpace(expr string, i int) int {
	for i < len(expr) && strings.ContainsRune(" \t\n", rune(expr[i])) {
		i++
	}
	return i
}

// TestDashboardScan checks the scan of PromQL expressions that the
// dashboard's checks rely on.
func TestDashboardScan(t *testing.T) {
	cases := []struct {
		name, expr string
		want       dashboardQuery
	}{
		{
			name: "selector with matchers and a range",
			expr: `rate(ramjet_requests_total{namespace="$namespace", class=~"5xx|4xx"}[$__rate_interval])`,
			want: dashboardQuery{
				Selectors: []dashboardSelector{{"ramjet_requests_total", map[string]string{"namespace": `="$namespace"`, "class": `=~"5xx|4xx"`}}},
				Ranges:    []string{"$__rate_interval"},
			},
		},
		{
			name: "histogram quantile of an aggregation by labels",
			expr: `histogram_quantile(0.99, sum by (le, pool) (rate(x_bucket{pool!~'a'}[5m])))`,
			want: dashboardQuery{
				Selectors: []dashboardSelector{{"x_bucket", map[string]string{"pool": `!~'a'`}}},
				Grouping:  []string{"le", "pool"},
				Ranges:    []string{"5m"},
			},
		},
		{
			name: "binary operations of bare metrics and keywords",
			expr: `time() - max(last) / on(pod) group_left() other and bool inf`,
			want: dashboardQuery{
				Selectors: []dashboardSelector{{Metric: "last"}, {Metric: "other"}},
				Grouping:  []string{"pod"},
			},
		},
		{
			name: "strings, numbers and variables are no metrics",
			expr: `label_replace(sum(m) without (instance), "application", "(unknown host)", "application", "") * 1e-3 + $scale * ${factor}`,
			want: dashboardQuery{Selectors: []dashboardSelector{{Metric: "m"}}, Grouping: []string{"instance"}},
		},
		{
			name: "quotes and braces inside a matcher's value",
			expr: "a{path=\"x\\\"}y\", raw=`z}`}",
			want: dashboardQuery{Selectors: []dashboardSelector{{"a", map[string]string{"path": `="x\"}y"`, "raw": "=`z}`"}}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := dashboardScan(tc.expr)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestDashboardScanErrors checks that expressions the scan cannot read
// fail rather than hide a metric.
func TestDashboardScanErrors(t *testing.T) {
	cases := []struct{ name, expr string }{
		{"selector without a metric name", `sum({job="x"})`},
		{"unterminated string", `a{b="c}`},
		{"matcher without an operator", `a{b}`},
		{"matcher without a quoted value", `a{b=c}`},
		{"range without its bracket", `rate(a[5m)`},
		{"grouping without its parenthesis", `sum by (le`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := dashboardScan(tc.expr); err == nil {
				t.Errorf("got %+v, want an error", got)
			}
		})
	}
}
