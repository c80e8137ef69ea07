// Package http1 is ramjetd's own HTTP/1.1 for the common case of a proxy:
// requests without a body, on kept-alive connections, served and forwarded
// on the goroutine of the client's connection.
//
// net/http does the same work with more around it: its server starts a
// goroutine per request to watch for the client going away, builds each
// request and response through general-purpose structures, and its
// Transport hands every request and response between a reader and a writer
// goroutine per member connection. On one core that costs more than
// everything else the proxy does. Profiles of ramjetd under load put most
// of its user time there.
//
// Server serves simple requests (see parseSimple) itself and hands a
// connection to net/http at its first request that is not simple; Client
// sends requests without a body (see Eligible) and leaves the rest to
// net/http's Transport. Both keep net/http's behaviour where they take
// over: tests compare their answers with net/http's.
//
// Per request, the work left is counted in allocations (16 for a proxied
// request in the benchmark's cell): a request's context is one
// (requestContext, which the Client's connections watch without
// allocating), a head's fields are parsed in one pass with one map
// insertion each, and the benchmarks in bench_test.go time the parsers.
// The Client's last write of a request to a plain member waits for the
// answer in the same call to the poller (tcpconn.Conn.WriteThenWait), so
// that reading the answer takes one system call, not a first one that
// finds nothing.
package http1
