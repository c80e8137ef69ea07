package main

import (
	"fmt"
	"slices"
	"strconv"
	"time"
)

// mode is how a cell's client talks to the proxy.
type mode int

const (
	// keepAlive is HTTP/1.1 on long-lived connections: wrk at full load,
	// h2load --h1 --rps at the fixed rate.
	keepAlive mode = iota
	// newConn is one request per new connection, each a full TLS
	// handshake: h2load -r (wrk would resume TLS sessions).
	newConn
	// http2 is HTTP/2 over TLS with h2load.
	http2
)

const (
	// rateClients is the number of connections of the fixed-rate pass.
	// h2load sends each connection's requests on its own timer, and the
	// timers of connections started together fire together: more
	// connections would send larger bursts.
	rateClients = 4
	// h2Streams is the number of HTTP/2 streams in flight per connection:
	// -conns streams over -conns/h2Streams connections.
	h2Streams = 8
	// newConnOffer is the connection rate offered in the full-load pass of
	// newConn cells, above what h2load's handshakes sustain on one core.
	newConnOffer = 1500
)

// auth is whether a cell's route asks an authentication service about
// every request, as ingress-nginx's auth-url (nginx auth_request).
type auth string

const (
	// noAuth is a route without external authentication.
	noAuth auth = ""
	// authAsked asks the service about every request.
	authAsked auth = "asked"
	// authCached remembers the service's answer by the Authorization
	// header (ingress-nginx's auth-cache-key), so after the first request
	// the service is not asked.
	authCached auth = "cached"
)

// authHeader is the header every request of an authenticated cell
// carries, and the only one the authentication service lets through.
const authHeader, authToken = "Authorization", "Bearer bench"

// cell is one situation measured for every contender (those of an
// authenticated cell: the contenders that have external authentication).
type cell struct {
	id   string // for -cells
	name string // in the report
	tls  bool
	path string // on the backend: /1k or /100k
	mode mode
	rate int // requests (or connections) per second of the fixed-rate pass
	auth auth
	// passthrough: the proxy splices the TLS connection to the backend's
	// HTTPS port by its server name, undecrypted.
	passthrough bool
}

// allCells are the cells of a full run, in order.
var allCells = []cell{
	{id: "http-1k", name: "HTTP/1.1 1 KiB", path: "/1k", mode: keepAlive, rate: 4000},
	{id: "http-100k", name: "HTTP/1.1 100 KiB", path: "/100k", mode: keepAlive, rate: 1500},
	{id: "https-1k", name: "HTTPS/1.1 1 KiB", tls: true, path: "/1k", mode: keepAlive, rate: 4000},
	{id: "https-100k", name: "HTTPS/1.1 100 KiB", tls: true, path: "/100k", mode: keepAlive, rate: 1500},
	{id: "handshake", name: "HTTPS new connection per request, 1 KiB", tls: true, path: "/1k", mode: newConn, rate: 500},
	{id: "h2-1k", name: "HTTP/2 (TLS) 1 KiB", tls: true, path: "/1k", mode: http2, rate: 4000},
	{id: "passthrough-100k", name: "HTTPS/1.1 100 KiB, ssl-passthrough (spliced by SNI)", tls: true, passthrough: true, path: "/100k", mode: keepAlive, rate: 1500},
	{id: "passthrough-handshake", name: "HTTPS new connection per request, 1 KiB, ssl-passthrough", tls: true, passthrough: true, path: "/1k", mode: newConn, rate: 500},
	{id: "auth-1k", name: "HTTP/1.1 1 KiB, external auth", path: "/1k", mode: keepAlive, rate: 2000, auth: authAsked},
	{id: "auth-cached-1k", name: "HTTP/1.1 1 KiB, external auth cached", path: "/1k", mode: keepAlive, rate: 2000, auth: authCached},
}

// headerArgs are the load generator's flags for the cell's request
// headers (wrk and h2load spell them alike).
func (c cell) headerArgs() []string {
	if c.auth == noAuth {
		return nil
	}
	return []string{"-H", authHeader + ": " + authToken}
}

// url is the cell's address on a proxy listening on httpPort and httpsPort.
func (c cell) url(httpPort, httpsPort int) string {
	switch {
	case c.passthrough:
		return fmt.Sprintf("https://%s:%d%s", passthroughHost, httpsPort, c.path)
	case c.tls:
		return fmt.Sprintf("https://127.0.0.1:%d%s", httpsPort, c.path)
	}
	return fmt.Sprintf("http://127.0.0.1:%d%s", httpPort, c.path)
}

// loadCommand is a load generator's command line and how many requests
// may fail at its end: h2load -D counts the requests in flight when it
// stops as errored.
type loadCommand struct {
	argv     []string
	stopLoss int64
}

// fullLoad is the command of the throughput pass: conns connections (or
// HTTP/2 streams) as fast as they go, for d.
func (c cell) fullLoad(url string, conns int, d time.Duration) loadCommand {
	switch c.mode {
	case newConn:
		return newConnCommand(url, newConnOffer, d, "", c.headerArgs())
	case http2:
		return loadCommand{
			argv:     slices.Concat([]string{"h2load", "-c", strconv.Itoa(conns / h2Streams), "-m", strconv.Itoa(h2Streams), "-D", seconds(d)}, c.headerArgs(), []string{url}),
			stopLoss: int64(conns),
		}
	}
	return loadCommand{argv: slices.Concat([]string{"wrk", "-t1", "-c", strconv.Itoa(conns), "-d", seconds(d), "--latency"}, c.headerArgs(), []string{url})}
}

// fixedRate is the command of the latency pass: c.rate requests a second
// for d, each logged into logFile.
func (c cell) fixedRate(url string, d time.Duration, logFile string) loadCommand {
	if c.mode == newConn {
		return newConnCommand(url, c.rate, d, logFile, c.headerArgs())
	}
	argv, streams := []string{"h2load", "--h1"}, 1
	if c.mode == http2 {
		argv, streams = []string{"h2load", "-m", strconv.Itoa(h2Streams)}, h2Streams
	}
	return loadCommand{
		argv: slices.Concat(argv, []string{"-c", strconv.Itoa(rateClients), "--rps", strconv.Itoa(c.rate / rateClients),
			"-D", seconds(d), "--log-file", logFile}, c.headerArgs(), []string{url}),
		stopLoss: int64(rateClients * streams),
	}
}

// offered is the request rate of the fixed-rate pass, as rounded by the
// split between connections.
func (c cell) offered() int {
	if c.mode == newConn {
		return c.rate // paced exactly
	}
	return c.rate / rateClients * rateClients
}

// pacing spreads rate new connections a second as evenly as h2load's -r
// (connections per period) and --rate-period (whole milliseconds) allow:
// n every period, with the shortest period that makes n whole (500/s:
// one every 2 ms; 1500/s: three every 2 ms).
func pacing(rate int) (n int, period time.Duration) {
	a, b := rate, 1000
	for b != 0 {
		a, b = b, a%b
	}
	ms := 1000 / a // a is gcd(rate, 1000)
	return rate * ms / 1000, time.Duration(ms) * time.Millisecond
}

// newConnCommand opens rate new connections a second for d, one request
// on each, with h2load (which, unlike wrk, does not resume TLS sessions),
// and the header flags headers.
func newConnCommand(url string, rate int, d time.Duration, logFile string, headers []string) loadCommand {
	n := strconv.Itoa(int(float64(rate) * d.Seconds()))
	perPeriod, period := pacing(rate)
	argv := []string{"h2load", "--h1", "-c", n, "-n", n,
		"-r", strconv.Itoa(perPeriod), "--rate-period", strconv.Itoa(int(period/time.Millisecond)) + "ms"}
	if logFile != "" {
		argv = append(argv, "--log-file", logFile)
	}
	return loadCommand{argv: slices.Concat(argv, headers, []string{url})}
}

// seconds formats a whole number of seconds for wrk and h2load.
func seconds(d time.Duration) string { return strconv.Itoa(int(d/time.Second)) + "s" }
