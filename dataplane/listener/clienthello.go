package listener

import (
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"golang.org/x/crypto/cryptobyte"
)

// MaxClientHelloBytes bounds what PeekServerName reads of a connection:
// the ClientHello's records (crypto/tls refuses a handshake message over
// 64 KiB too).
const MaxClientHelloBytes = 64 << 10

// The TLS constants PeekServerName reads (RFC 8446).
const (
	recordHandshake    = 22
	handshakeHello     = 1
	extServerName      = 0
	serverNameHostName = 0
	maxRecordPayload   = 16384 + 2048 // TLSCiphertext's bound; a plaintext record is at most 16384
)

// errNoServerName says a ClientHello holds no server name.
var errNoServerName = errors.New("no server name in the ClientHello")

// PeekServerName reads the ClientHello that starts a TLS connection from r,
// at most max bytes of it, and returns the server name it asks for (SNI,
// lower-cased, without a trailing dot) and every byte it read, which the
// caller replays to whoever handles the connection. It stops at the first
// byte that is not what a ClientHello holds (plain HTTP, another record
// type), so that what it read is still the start of the connection. An
// error says no name could be had: the connection ended or timed out, the
// bytes are no ClientHello, or it names no host.
func PeekServerName(r io.Reader, max int) (string, []byte, error) {
	p := peeker{r: r, max: max}
	name, err := p.serverName()
	return name, p.read, err
}

// peeker reads records and remembers what it read.
type peeker struct {
	r    io.Reader
	max  int
	read []byte
}

// readFull reads n more bytes, within the bound.
func (p *peeker) readFull(n int) ([]byte, error) {
	if len(p.read)+n > p.max {
		return nil, errors.New("the ClientHello is longer than the bound")
	}
	start := len(p.read)
	p.read = append(p.read, make([]byte, n)...)
	got, err := io.ReadFull(p.r, p.read[start:])
	p.read = p.read[:start+got]
	if err != nil {
		return nil, err
	}
	return p.read[start:], nil
}

// record reads one handshake record's payload.
func (p *peeker) record() ([]byte, error) {
	hdr, err := p.readFull(5)
	if err != nil {
		return nil, err
	}
	if hdr[0] != recordHandshake || hdr[1] != 3 {
		return nil, errors.New("not a TLS handshake record")
	}
	n := int(hdr[3])<<8 | int(hdr[4])
	if n == 0 || n > maxRecordPayload {
		return nil, errors.New("a TLS record of an invalid length")
	}
	return p.readFull(n)
}

func (p *peeker) serverName() (string, error) {
	var msg []byte
	for len(msg) < 4 || len(msg) < 4+messageLength(msg) {
		if len(msg) >= 1 && msg[0] != handshakeHello {
			return "", errors.New("the first handshake message is not a ClientHello")
		}
		fragment, err := p.record()
		if err != nil {
			return "", err
		}
		msg = append(msg, fragment...)
	}
	if msg[0] != handshakeHello {
		return "", errors.New("the first handshake message is not a ClientHello")
	}
	return helloServerName(msg[4 : 4+messageLength(msg)])
}

// messageLength is the length of the handshake message that msg, at least
// four bytes, starts.
func messageLength(msg []byte) int {
	return int(msg[1])<<16 | int(msg[2])<<8 | int(msg[3])
}

// helloServerName finds the host name of the server_name extension in the
// body of a ClientHello (RFC 8446 §4.1.2, RFC 6066 §3).
func helloServerName(body []byte) (string, error) {
	s := cryptobyte.String(body)
	var sessionID, suites, compression, exts cryptobyte.String
	if !s.Skip(2+32) || !s.ReadUint8LengthPrefixed(&sessionID) || !s.ReadUint16LengthPrefixed(&suites) ||
		!s.ReadUint8LengthPrefixed(&compression) {
		return "", errors.New("a malformed ClientHello")
	}
	if s.Empty() {
		return "", errNoServerName // no extensions
	}
	if !s.ReadUint16LengthPrefixed(&exts) || !s.Empty() {
		return "", errors.New("malformed ClientHello extensions")
	}
	for !exts.Empty() {
		var typ uint16
		var data cryptobyte.String
		if !exts.ReadUint16(&typ) || !exts.ReadUint16LengthPrefixed(&data) {
			return "", errors.New("malformed ClientHello extensions")
		}
		if typ != extServerName {
			continue
		}
		var names cryptobyte.String
		if !data.ReadUint16LengthPrefixed(&names) || !data.Empty() {
			return "", errors.New("a malformed server_name extension")
		}
		for !names.Empty() {
			var nameType uint8
			var name cryptobyte.String
			if !names.ReadUint8(&nameType) || !names.ReadUint16LengthPrefixed(&name) {
				return "", errors.New("a malformed server_name extension")
			}
			if nameType != serverNameHostName {
				continue
			}
			host := strings.ToLower(strings.TrimSuffix(string(name), "."))
			if host == "" || !printableHost(host) {
				return "", errors.New("an invalid server name")
			}
			return host, nil
		}
		return "", errNoServerName
	}
	return "", errNoServerName
}

// printableHost reports whether a server name holds only the bytes of a
// DNS name (letters, digits, hyphen, dot, underscore, and * of a
// wildcard, which no table key matches).
func printableHost(h string) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '*') {
			return false
		}
	}
	return true
}

// ReplayConn is a connection whose first reads return bytes already read
// from it (by PeekServerName), then what the connection itself reads.
type ReplayConn struct {
	net.Conn
	head []byte
}

// NewReplayConn returns c with head replayed before its own bytes.
func NewReplayConn(c net.Conn, head []byte) *ReplayConn {
	return &ReplayConn{Conn: c, head: head}
}

// Read reads the replayed bytes first.
func (c *ReplayConn) Read(p []byte) (int, error) {
	if len(c.head) > 0 {
		n := copy(p, c.head)
		c.head = c.head[n:]
		if len(c.head) == 0 {
			c.head = nil
		}
		return n, nil
	}
	return c.Conn.Read(p)
}

// Buffered returns the replayed bytes not read yet.
func (c *ReplayConn) Buffered() []byte { return c.head }

// CloseWrite shuts down the writing side of the connection when it can.
func (c *ReplayConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

// SyscallConn is the connection's, so that socket checks still see it.
func (c *ReplayConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.New("not a socket")
}
