package extauth

import (
	"io"
	"net"
)

// closeAfter is an answer's body whose connection is closed with it.
type closeAfter struct {
	io.ReadCloser
	conn net.Conn
}

func (b *closeAfter) Close() error {
	err := b.ReadCloser.Close()
	b.conn.Close()
	return err
}
