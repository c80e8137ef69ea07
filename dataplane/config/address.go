package config

import (
	"errors"
	"net"
	"net/netip"
)

// ErrLocalAddress is what every error of the address rule (CheckMemberIP)
// is: an address a member that does not come from a file written by hand
// may not have.
var ErrLocalAddress = errors.New("a member from the API or from DNS may not be a loopback, unspecified, link-local, multicast or broadcast address")

// AddressKind is the kind of address the address rule refuses.
type AddressKind string

// The kinds of address the address rule refuses.
const (
	// Loopback is 127.0.0.0/8 and ::1: the proxy's own host.
	Loopback AddressKind = "loopback"
	// Unspecified is 0.0.0.0/8 and ::, which Linux connects to the local
	// host.
	Unspecified AddressKind = "unspecified"
	// LinkLocal is 169.254.0.0/16 and fe80::/10: the node's link, where
	// cloud metadata services answer (169.254.169.254).
	LinkLocal AddressKind = "link-local"
	// Multicast is 224.0.0.0/4 and ff00::/8.
	Multicast AddressKind = "multicast"
	// Broadcast is 255.255.255.255.
	Broadcast AddressKind = "broadcast"
	// Zoned is an IPv6 address with a zone ("fe80::1%eth0"), which names an
	// interface of the proxy's host.
	Zoned AddressKind = "zoned"
)

// AddressError is an address the address rule refuses, with its kind.
type AddressError struct {
	Addr netip.Addr
	Kind AddressKind
}

func (e *AddressError) Error() string {
	article := "a "
	if e.Kind == Unspecified {
		article = "an "
	}
	return e.Addr.String() + " is " + article + string(e.Kind) + " address"
}

// Is makes every AddressError an ErrLocalAddress.
func (e *AddressError) Is(target error) bool { return target == ErrLocalAddress }

// thisNetwork is 0.0.0.0/8, RFC 1122's "this host on this network".
var thisNetwork = netip.MustParsePrefix("0.0.0.0/8")

// CheckMemberIP is the one address rule for members that do not come from
// a file written by hand: the endpoints of EndpointSlices, the ClusterIPs
// and IP addresses of Services, the members PUT /v1/upstreams/{pool} sets,
// the seeds of members_from: api pools, and the addresses a member's DNS
// name resolves to. Such an address must not lead the proxy to itself, to
// its node or its link (a cloud metadata service at 169.254.169.254), or
// to no single host, so the rule refuses loopback (127.0.0.0/8, ::1),
// unspecified (0.0.0.0/8, ::), link-local (169.254.0.0/16, fe80::/10),
// multicast (224.0.0.0/4, ff00::/8) and broadcast (255.255.255.255)
// addresses, and zoned ones. An IPv4-mapped IPv6 address
// (::ffff:127.0.0.1) is judged as the IPv4 address it maps, which is where
// a connection to it goes. The error is an *AddressError.
func CheckMemberIP(ip netip.Addr) error {
	if kind := addressKind(ip); kind != "" {
		return &AddressError{Addr: ip, Kind: kind}
	}
	return nil
}

func addressKind(ip netip.Addr) AddressKind {
	if ip.Zone() != "" {
		return Zoned
	}
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return Loopback
	case ip.IsUnspecified(), thisNetwork.Contains(ip):
		return Unspecified
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return LinkLocal
	case ip.IsMulticast():
		return Multicast
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return Broadcast
	}
	return ""
}

// checkMemberHost applies the address rule to the host of a member address
// (host:port) when it is an IP address, allowing loopback addresses when
// loopback is true; a DNS name passes (ramjetd applies the rule to what it
// resolves to).
func checkMemberHost(addr string, loopback bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return nil
	}
	return CheckMemberIPLoopback(ip, loopback)
}

// CheckMemberIPLoopback is CheckMemberIP allowing loopback addresses when
// loopback is true (server.admin.allow_loopback_members).
func CheckMemberIPLoopback(ip netip.Addr, loopback bool) error {
	err := CheckMemberIP(ip)
	var refused *AddressError
	if loopback && errors.As(err, &refused) && refused.Kind == Loopback {
		return nil
	}
	return err
}
