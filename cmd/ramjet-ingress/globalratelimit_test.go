package main

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

func TestGlobalRateLimitFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    *config.Memcached
		wantErr string
	}{
		{"no host: no memcached", nil, nil, ""},
		{"host with defaults", []string{"--global-rate-limit-memcached-host", "memcached.cache.svc"},
			&config.Memcached{Addresses: []string{"memcached.cache.svc:11211"}, Timeout: config.Duration(50 * time.Millisecond), PoolSize: 50}, ""},
		{"every flag", []string{"--global-rate-limit-memcached-host", "10.0.0.9", "--global-rate-limit-memcached-port", "11311",
			"--global-rate-limit-memcached-connect-timeout", "200ms", "--global-rate-limit-memcached-pool-size", "8", "--global-rate-limit-status-code", "503"},
			&config.Memcached{Addresses: []string{"10.0.0.9:11311"}, Timeout: config.Duration(200 * time.Millisecond), PoolSize: 8}, ""},
		{"IPv6 host", []string{"--global-rate-limit-memcached-host", "fd00::9"},
			&config.Memcached{Addresses: []string{"[fd00::9]:11211"}, Timeout: config.Duration(50 * time.Millisecond), PoolSize: 50}, ""},
		{"bad status", []string{"--global-rate-limit-status-code", "200"}, nil, "--global-rate-limit-status-code: must be 400..599"},
		{"bad host", []string{"--global-rate-limit-memcached-host", "a b"}, nil, "host must be a name or an IP address"},
		{"bad port", []string{"--global-rate-limit-memcached-host", "m", "--global-rate-limit-memcached-port", "0"}, nil, "port must be 1..65535"},
		{"timeout too long", []string{"--global-rate-limit-memcached-host", "m", "--global-rate-limit-memcached-connect-timeout", "1m"}, nil, "server.memcached.timeout"},
		{"no pool", []string{"--global-rate-limit-memcached-host", "m", "--global-rate-limit-memcached-pool-size", "0"}, nil, "must be more than 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var g globalRateLimitFlags
			fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
			g.register(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			base := &config.Server{}
			err := g.apply(base)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(base.Memcached, tc.want) {
				t.Errorf("memcached %+v, %v; want %+v", base.Memcached, err, tc.want)
			}
		})
	}
}
