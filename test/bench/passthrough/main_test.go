package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       procStat
		err        bool
	}{
		{"nginx worker", "4242 (nginx) S 4241 4241 4241 0 -1 4194624 120 0 0 0 250 130 0 0 20 0 1 0 12345 1000 200", procStat{ppid: 4241, cpu: 3800 * time.Millisecond}, false},
		{"a command with spaces and parentheses", "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 1 1 1", procStat{ppid: 1, cpu: 30 * time.Millisecond}, false},
		{"no command", "7 R 1", procStat{}, true},
		{"too few fields", "7 (x) R 1 2 3", procStat{}, true},
		{"not a number", "7 (x) R 1 7 7 0 -1 0 0 0 0 0 x 2 0", procStat{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStat(tc.line)
			if (err != nil) != tc.err || got != tc.want {
				t.Errorf("parseStat: %+v, %v; want %+v (error %v)", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestParseBusy(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	got, err := parseBusy("cpu  100 5 50 1000 20 3 2 1 40 0")
	if want := 161 * clockTick; err != nil || got != want {
		t.Errorf("parseBusy: %v, %v; want %v (all but idle, iowait and the guest times)", got, err, want)
	}
	if _, err := parseBusy("intr 1 2 3"); err == nil {
		t.Error("parseBusy accepted a line that is not the cpu line")
	}
}

func TestDescendants(t *testing.T) {
	stats := map[int]procStat{1: {ppid: 0}, 10: {ppid: 1}, 11: {ppid: 10}, 12: {ppid: 10}, 20: {ppid: 1}, 13: {ppid: 11}}
	got := descendants(stats, 10)
	if len(got) != 4 || got[0] != 10 || !contains(got, 11) || !contains(got, 12) || !contains(got, 13) {
		t.Errorf("descendants of 10: %v, want 10, 11, 12 and 13", got)
	}
}

func contains(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func TestConfigs(t *testing.T) {
	d := configData{Dir: "/tmp/b", Listen: "127.0.0.1:9443", Health: "127.0.0.1:9081", Member: "127.0.0.1:9000", Name: serverName, Module: nginxModule}
	for _, tc := range []struct {
		name string
		got  func() (string, error)
		want []string
	}{
		{"ramjetd", func() (string, error) { return render(ramjetdConfig, d) }, []string{
			`https: {address: "127.0.0.1:9443", tls: {}}`, "domains: [pass.bench]", "passthrough: {pool: member}", `members: ["127.0.0.1:9000"]`, "allow_loopback_members: true",
		}},
		{"nginx", func() (string, error) { return render(nginxConfig, d) }, []string{
			"load_module " + nginxModule + ";", "worker_processes 1;", "pass.bench 127.0.0.1:9000;", "listen 127.0.0.1:9443;", "ssl_preread on;", "proxy_pass $member;",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, err := tc.got()
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("the configuration lacks %q:\n%s", w, text)
				}
			}
		})
	}
}

func TestNumberAndSummary(t *testing.T) {
	for _, tc := range []struct {
		values []float64
		want   string
	}{
		{[]float64{1234.4}, "1,234"},
		{[]float64{123456.7}, "123,457"},
		{[]float64{12.34}, "12.3"},
		{[]float64{1.234}, "1.23"},
		{[]float64{3, 1, 2}, "2.00 (1.00–3.00)"},
		{[]float64{4, 1, 2, 3}, "2.50 (1.00–4.00)"},
		{nil, "—"},
	} {
		if got := summary(tc.values); got != tc.want {
			t.Errorf("summary(%v) = %q, want %q", tc.values, got, tc.want)
		}
	}
}

func TestPickCells(t *testing.T) {
	cells, err := pickCells("upload, connect")
	if err != nil || len(cells) != 2 || cells[0].name != "upload" || cells[1].name != "connect" {
		t.Errorf("pickCells: %v, %v", cells, err)
	}
	if _, err := pickCells("download,sideways"); err == nil || !strings.Contains(err.Error(), "sideways") {
		t.Errorf("pickCells of an unknown cell: %v, want an error naming it", err)
	}
}
