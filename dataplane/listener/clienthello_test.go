package listener

import (
	"bytes"
	"crypto/tls"
	"net"
	"testing"
	"time"
)

// hello returns the first flight crypto/tls sends with cfg.
func hello(t *testing.T, cfg *tls.Config) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go tls.Client(a, cfg).Handshake()
	buf := make([]byte, 64<<10)
	b.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := b.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf[:n]
}

// fragment splits the handshake message of one record into records of at
// most size bytes, as a client may.
func fragment(record []byte, size int) []byte {
	msg := record[5:]
	var out []byte
	for len(msg) > 0 {
		n := min(size, len(msg))
		out = append(out, 22, 3, 1, byte(n>>8), byte(n))
		out = append(out, msg[:n]...)
		msg = msg[n:]
	}
	return out
}

func TestPeekServerName(t *testing.T) {
	withSNI := hello(t, &tls.Config{ServerName: "Pass.Example.COM."})
	noSNI := hello(t, &tls.Config{InsecureSkipVerify: true})
	tests := []struct {
		name    string
		in      []byte
		max     int
		want    string
		wantErr bool
		// read is how much of in PeekServerName may read: everything,
		// or a prefix when it stops early.
		read int
	}{
		{name: "server name lower-cased without its dot", in: withSNI, want: "pass.example.com"},
		{name: "a ClientHello over several records", in: fragment(withSNI, 100), want: "pass.example.com"},
		{name: "no server name", in: noSNI, wantErr: true},
		{name: "plain HTTP stops after the record header", in: []byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), wantErr: true, read: 5},
		{name: "an alert record", in: []byte{21, 3, 1, 0, 2, 2, 40}, wantErr: true, read: 5},
		{name: "cut short", in: withSNI[:len(withSNI)/2], wantErr: true},
		{name: "garbage in a handshake record", in: []byte{22, 3, 1, 0, 6, 1, 0, 0, 2, 3, 3}, wantErr: true},
		{name: "over the bound", in: withSNI, max: 64, wantErr: true},
		{name: "a handshake message other than ClientHello", in: []byte{22, 3, 3, 0, 4, 2, 0, 0, 0}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			max := tt.max
			if max == 0 {
				max = MaxClientHelloBytes
			}
			name, read, err := PeekServerName(bytes.NewReader(tt.in), max)
			if (err != nil) != tt.wantErr || name != tt.want {
				t.Fatalf("got %q, %v; want %q, error %v", name, err, tt.want, tt.wantErr)
			}
			if want := tt.in; tt.read > 0 {
				if !bytes.Equal(read, want[:tt.read]) {
					t.Errorf("read % x, want % x", read, want[:tt.read])
				}
			} else if !bytes.HasPrefix(want, read) {
				t.Errorf("read %d bytes that are not the start of the input", len(read))
			}
			if !tt.wantErr && !bytes.Equal(read, tt.in) {
				t.Errorf("read %d bytes, want the whole ClientHello (%d)", len(read), len(tt.in))
			}
		})
	}
}

func TestReplayConn(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	go func() { b.Write([]byte(" world")); b.Close() }()
	c := NewReplayConn(a, []byte("hello"))
	var got []byte
	buf := make([]byte, 3)
	for {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			break
		}
	}
	if string(got) != "hello world" {
		t.Errorf("read %q, want the replayed bytes then the connection's", got)
	}
}

func FuzzPeekServerName(f *testing.F) {
	f.Add([]byte{22, 3, 1, 0, 6, 1, 0, 0, 2, 3, 3})
	f.Fuzz(func(t *testing.T, in []byte) {
		_, read, _ := PeekServerName(bytes.NewReader(in), 4096)
		if len(read) > 4096 || !bytes.HasPrefix(in, read) {
			t.Fatalf("read %d bytes, not a bounded prefix of the input", len(read))
		}
	})
}
