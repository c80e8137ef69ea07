package config

import (
	"reflect"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestFromEnv(t *testing.T) {
	defaults := Config{HTTPPort: 3000, H2CPort: 3001, HTTPSPort: 8443, TCPPort: 3000, TLSPort: 8443, UDPPort: 8080}
	with := func(f func(*Config)) Config { c := defaults; f(&c); return c }
	tests := []struct {
		name string
		env  map[string]string
		want Config
	}{
		{name: "defaults", env: nil, want: defaults},
		{
			name: "infra backend",
			env:  map[string]string{"POD_NAME": "infra-backend-v1-abc", "NAMESPACE": "gateway-conformance-infra"},
			want: with(func(c *Config) { c.Pod = Pod{Name: "infra-backend-v1-abc", Namespace: "gateway-conformance-infra"} }),
		},
		{
			name: "tls backend reads TLS_SERVER_PRIVKEY",
			env: map[string]string{
				"TLS_SERVER_CERT": "/etc/secret-volume/crt", "TLS_SERVER_PRIVKEY": "/etc/secret-volume/key",
				"TLS_SERVER_PRIV_KEY": "/wrong", "TLS_CLIENT_CACERTS": "/etc/configmap-volume/ca",
			},
			want: with(func(c *Config) {
				c.CertFile, c.KeyFile, c.ClientCAFile = "/etc/secret-volume/crt", "/etc/secret-volume/key", "/etc/configmap-volume/ca"
			}),
		},
		{
			name: "grpc reads TLS_SERVER_PRIV_KEY",
			env:  map[string]string{"GRPC_ECHO_SERVER": "1", "TLS_SERVER_CERT": "/c", "TLS_SERVER_PRIV_KEY": "/k", "TLS_SERVER_PRIVKEY": "/wrong"},
			want: with(func(c *Config) { c.Mode, c.CertFile, c.KeyFile = GRPC, "/c", "/k" }),
		},
		{
			name: "grpc wins over tcp",
			env:  map[string]string{"GRPC_ECHO_SERVER": "1", "TCP_ECHO_SERVER": "1"},
			want: with(func(c *Config) { c.Mode = GRPC }),
		},
		{
			name: "tcp wins over udp",
			env:  map[string]string{"TCP_ECHO_SERVER": "1", "UDP_ECHO_SERVER": "1", "SERVICE_NAME": "tcp-echo-one"},
			want: with(func(c *Config) { c.Mode, c.Pod.Service = TCP, "tcp-echo-one" }),
		},
		{
			name: "udp with port",
			env:  map[string]string{"UDP_ECHO_SERVER": "yes", "UDP_PORT": "9000", "INGRESS_NAME": "ramjet"},
			want: with(func(c *Config) { c.Mode, c.UDPPort, c.Pod.Ingress = UDP, 9000, "ramjet" }),
		},
		{
			name: "ports and address",
			env:  map[string]string{"HTTP_PORT": "0", "H2C_PORT": "65535", "HTTPS_PORT": "443", "POD_IP": "198.18.0.7"},
			want: with(func(c *Config) { c.HTTPPort, c.H2CPort, c.HTTPSPort, c.Address = 0, 65535, 443, "198.18.0.7" }),
		},
		{
			name: "ipv6 address",
			env:  map[string]string{"POD_IP": "2001:db8::1"},
			want: with(func(c *Config) { c.Address = "2001:db8::1" }),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromEnv(env(tc.env))
			if err != nil {
				t.Fatalf("FromEnv: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestFromEnvErrors(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"port not a number", map[string]string{"HTTP_PORT": "http"}, `HTTP_PORT: "http" is not a port number`},
		{"port too large", map[string]string{"H2C_PORT": "65536"}, `H2C_PORT: "65536" is not a port number`},
		{"port negative", map[string]string{"TLS_PORT": "-1"}, `TLS_PORT: "-1" is not a port number`},
		{"udp port", map[string]string{"UDP_PORT": "8080x"}, `UDP_PORT: "8080x"`},
		{"address", map[string]string{"POD_IP": "pod.local"}, `POD_IP: "pod.local" is not an IP address`},
		{"address with zone", map[string]string{"POD_IP": "fe80::1%eth0"}, `POD_IP: "fe80::1%eth0" is not an IP address`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromEnv(env(tc.env))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestAddr(t *testing.T) {
	tests := []struct {
		address string
		port    int
		want    string
	}{
		{"", 3000, ":3000"},
		{"198.18.0.7", 8443, "198.18.0.7:8443"},
		{"2001:db8::1", 0, "[2001:db8::1]:0"},
	}
	for _, tc := range tests {
		if got := (Config{Address: tc.address}).Addr(tc.port); got != tc.want {
			t.Errorf("Addr(%q, %d) = %q, want %q", tc.address, tc.port, got, tc.want)
		}
	}
}
