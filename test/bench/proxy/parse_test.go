package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The files of testdata are the output of wrk 4.1.0 and h2load 1.52.0
// (Debian 12) against nginx on loopback, as captured.

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestParseTools(t *testing.T) {
	const tlsInfo = "TLSv1.3, TLS_AES_128_GCM_SHA256, X25519 253 bits"
	tests := []struct {
		name    string
		parse   func(string) (toolResult, error)
		file    string
		want    toolResult
		wantErr string
	}{
		{"wrk keep-alive 1 KiB", parseWrk, "wrk_http.txt", toolResult{responses: 53594, rps: 26709.01}, ""},
		{"wrk 100 KiB over TLS (GB read)", parseWrk, "wrk_https_100k.txt", toolResult{responses: 12775, rps: 6383.24}, ""},
		{"wrk 404 answers", parseWrk, "wrk_non2xx.txt", toolResult{responses: 34916, non2xx: 34916, rps: 34891.89}, ""},
		{"wrk connections closed without an answer", parseWrk, "wrk_socket_errors.txt", toolResult{errors: 13005}, ""},
		{"wrk with nothing listening", parseWrk, "wrk_refused.txt", toolResult{}, "unable to connect"},
		{"h2load HTTP/2 timed run cut at its end", parseH2load, "h2load_h2_stopped.txt",
			toolResult{responses: 8000, errors: 42, rps: 4000, tls: tlsInfo, ttfb: 9970 * time.Microsecond}, ""},
		{"h2load new connections at a fixed rate", parseH2load, "h2load_new_connections.txt",
			toolResult{responses: 100, rps: 239.44, tls: tlsInfo, ttfb: 16370 * time.Microsecond}, ""},
		{"h2load fixed rate on kept-alive connections", parseH2load, "h2load_rps.txt",
			toolResult{responses: 4000, rps: 2000, tls: tlsInfo}, ""},
		{"h2load 200 and 404 answers", parseH2load, "h2load_mixed.txt",
			toolResult{responses: 6, non2xx: 2, rps: 2722.32, ttfb: 674 * time.Microsecond}, ""},
		{"h2load with nothing listening", parseH2load, "h2load_refused.txt", toolResult{errors: 10}, ""},
		{"h2load given wrk's output", parseH2load, "wrk_http.txt", toolResult{}, "no summary"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.parse(readTestdata(t, tc.file))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseH2loadLog(t *testing.T) {
	tests := []struct {
		name    string
		log     string
		want    []time.Duration
		wantErr bool
	}{
		{"2xx kept, 404 left out", readTestdata(t, "h2load_mixed.log"),
			[]time.Duration{352 * time.Microsecond, 387 * time.Microsecond, 113 * time.Microsecond, 230 * time.Microsecond}, false},
		{"failed stream (status -1) left out", "1796036563646276\t-1\t0\n", nil, false},
		{"empty", "", nil, false},
		{"two columns", "1796036563646276\t200\n", nil, true},
		{"not a number", "1796036563646276\t200\tfast\n", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseH2loadLog(tc.log)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error: %v", err, tc.wantErr)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseStubStatus(t *testing.T) {
	tests := []struct {
		name    string
		page    string
		want    int64
		wantErr bool
	}{
		{"nginx 1.22", readTestdata(t, "stub_status.txt"), 3, false},
		{"not stub_status", "<html>404</html>", 0, true},
		{"no counts", "Active connections: 1\nserver accepts handled requests\n\n", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStubStatus(tc.page)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("got %d, %v; want %d, error: %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
