// Package config reads the echo server's configuration from the environment
// variables that the Gateway API conformance manifests set on their echo
// Deployments, with the same names and defaults as the suite's echo-basic
// image, plus POD_IP to bind every listener to one address.
package config

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// Mode is the kind of echo server a pod runs; the zero value is HTTP.
type Mode int

// The modes, chosen as echo-basic chooses them: GRPC_ECHO_SERVER first, then
// TCP_ECHO_SERVER, then UDP_ECHO_SERVER (any non-empty value), else HTTP.
const (
	HTTP Mode = iota
	GRPC
	TCP
	UDP
)

// String names the mode.
func (m Mode) String() string {
	switch m {
	case GRPC:
		return "grpc"
	case TCP:
		return "tcp"
	case UDP:
		return "udp"
	default:
		return "http"
	}
}

// Pod is what the server reports about where it runs; each field is echoed
// as is, and an unset variable gives an empty field.
type Pod struct {
	// Namespace is NAMESPACE.
	Namespace string
	// Ingress is INGRESS_NAME.
	Ingress string
	// Service is SERVICE_NAME.
	Service string
	// Name is POD_NAME.
	Name string
}

// Config is the whole configuration of one echo server process. Ports are
// numbers from 0 to 65535; 0 asks the kernel for a free port (for tests).
type Config struct {
	Mode Mode
	Pod  Pod

	// Address is POD_IP: the one address every listener binds to. Empty
	// means all addresses.
	Address string

	// HTTPPort is HTTP_PORT (default 3000): plain HTTP/1.1 in HTTP mode,
	// plaintext gRPC in gRPC mode.
	HTTPPort int
	// H2CPort is H2C_PORT (default 3001): HTTP/2 without TLS, HTTP mode.
	H2CPort int
	// HTTPSPort is HTTPS_PORT (default 8443): HTTPS in HTTP mode, gRPC over
	// TLS in gRPC mode; served only when a certificate and key are set.
	HTTPSPort int
	// TCPPort is TCP_PORT (default 3000), TCP mode.
	TCPPort int
	// TLSPort is TLS_PORT (default 8443): the TCP protocol inside TLS, TCP
	// mode; served only when a certificate and key are set.
	TLSPort int
	// UDPPort is UDP_PORT (default 8080), UDP mode.
	UDPPort int

	// CertFile is TLS_SERVER_CERT, a PEM certificate chain.
	CertFile string
	// KeyFile is the PEM key of CertFile: TLS_SERVER_PRIVKEY in HTTP mode,
	// TLS_SERVER_PRIV_KEY in gRPC and TCP modes (echo-basic reads these
	// two names; the manifests follow it).
	KeyFile string
	// ClientCAFile is TLS_CLIENT_CACERTS (HTTP mode): PEM authorities that
	// client certificates are verified against when a client sends one.
	ClientCAFile string
}

// TLS reports whether a certificate and a key are both configured, which
// is when echo-basic serves its TLS listener.
func (c Config) TLS() bool { return c.CertFile != "" && c.KeyFile != "" }

// Addr is the listen address for port on Address.
func (c Config) Addr(port int) string {
	return net.JoinHostPort(c.Address, strconv.Itoa(port))
}

// FromEnv reads the configuration through getenv (os.Getenv in the
// program). An invalid port or POD_IP is an error naming the variable.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		Mode: mode(getenv),
		Pod: Pod{
			Namespace: getenv("NAMESPACE"),
			Ingress:   getenv("INGRESS_NAME"),
			Service:   getenv("SERVICE_NAME"),
			Name:      getenv("POD_NAME"),
		},
		CertFile:     getenv("TLS_SERVER_CERT"),
		ClientCAFile: getenv("TLS_CLIENT_CACERTS"),
	}
	if c.Mode == HTTP {
		c.KeyFile = getenv("TLS_SERVER_PRIVKEY")
	} else {
		c.KeyFile = getenv("TLS_SERVER_PRIV_KEY")
	}
	if a := getenv("POD_IP"); a != "" {
		ip, err := netip.ParseAddr(a)
		if err != nil || ip.Zone() != "" {
			return Config{}, fmt.Errorf("POD_IP: %q is not an IP address", a)
		}
		c.Address = ip.String()
	}
	ports := []struct {
		name string
		def  int
		dst  *int
	}{
		{"HTTP_PORT", 3000, &c.HTTPPort},
		{"H2C_PORT", 3001, &c.H2CPort},
		{"HTTPS_PORT", 8443, &c.HTTPSPort},
		{"TCP_PORT", 3000, &c.TCPPort},
		{"TLS_PORT", 8443, &c.TLSPort},
		{"UDP_PORT", 8080, &c.UDPPort},
	}
	for _, p := range ports {
		n, err := port(getenv(p.name), p.def)
		if err != nil {
			return Config{}, fmt.Errorf("%s: %w", p.name, err)
		}
		*p.dst = n
	}
	return c, nil
}

func mode(getenv func(string) string) Mode {
	switch {
	case getenv("GRPC_ECHO_SERVER") != "":
		return GRPC
	case getenv("TCP_ECHO_SERVER") != "":
		return TCP
	case getenv("UDP_ECHO_SERVER") != "":
		return UDP
	default:
		return HTTP
	}
}

func port(v string, def int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 65535 {
		return 0, fmt.Errorf("%q is not a port number (0 to 65535)", v)
	}
	return n, nil
}
