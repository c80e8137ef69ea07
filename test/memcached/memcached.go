// Package memcached starts a real memcached (Debian's package memcached)
// on loopback for a test: the global rate limits' tests count in it.
package memcached

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// Start runs memcached on a free loopback port until the test ends and
// returns its host:port. The test is skipped, saying so, when the
// memcached binary is absent (apt-get install memcached; make deps
// installs it).
func Start(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("memcached")
	if err != nil {
		t.Skip("memcached is not installed (apt-get install memcached, or make deps): the global rate limit tests need a real one")
	}
	for try := 0; try < 5; try++ {
		addr := FreeAddress(t)
		_, port, _ := net.SplitHostPort(addr)
		args := []string{"-l", "127.0.0.1", "-p", port, "-U", "0", "-m", "16", "-t", "1"}
		if os.Geteuid() == 0 {
			args = append(args, "-u", "root") // memcached refuses root without it
		}
		cmd := exec.Command(bin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatalf("memcached: %v", err)
		}
		exited := make(chan struct{})
		go func() {
			cmd.Wait()
			close(exited)
		}()
		if waitListening(addr, exited) {
			t.Cleanup(func() {
				cmd.Process.Kill()
				<-exited
			})
			return addr
		}
		cmd.Process.Kill()
		<-exited
		t.Logf("memcached on %s did not start: %s", addr, stderr.String())
	}
	t.Fatal("memcached did not start listening")
	return ""
}

// FreeAddress is a loopback host:port nothing listens on (for a test of an
// unreachable memcached).
func FreeAddress(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
}

// waitListening waits up to 5 s for addr to accept connections, false
// when memcached exited first (its port was taken meanwhile).
func waitListening(addr string, exited <-chan struct{}) bool {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			c.Close()
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}
