//go:build conformance

package cluster

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// followPoll is how often a followed log is read again for new lines.
const followPoll = 100 * time.Millisecond

// logServer is the Node's kubelet endpoint, reduced to what `kubectl logs`
// asks of it: GET /containerLogs/NAMESPACE/POD/CONTAINER, answered from the
// container's CRI log as kubelet answers.
type logServer struct {
	port   int
	server *http.Server
	// pods is set once the pod runner runs.
	pods interface {
		lookup(namespace, name string) (*harness.Pod, bool)
	}
}

// startLogServer serves HTTPS on a free port of nodeIP with a self-signed
// certificate (the API server does not verify kubelets' certificates
// unless told to).
func startLogServer() (*logServer, error) {
	cert, _, err := harness.SelfSigned(nodeIP)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", net.JoinHostPort(nodeIP, "0"))
	if err != nil {
		return nil, err
	}
	s := &logServer{port: l.Addr().(*net.TCPAddr).Port}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", s.containerLogs)
	s.server = &http.Server{Handler: mux, ReadHeaderTimeout: apiTimeout}
	tlsListener := tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	go func() { _ = s.server.Serve(tlsListener) }()
	return s, nil
}

func (s *logServer) close() { _ = s.server.Close() }

// logQuery is what kubelet's log endpoint takes (PodLogOptions).
type logQuery struct {
	since      time.Time
	timestamps bool
	follow     bool
	tailLines  int // -1: all
	limitBytes int // 0: no limit
}

// containerLogs answers a container's log.
func (s *logServer) containerLogs(w http.ResponseWriter, r *http.Request) {
	q, err := parseLogQuery(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ns, name, container := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	if s.pods == nil {
		http.Error(w, "the pod runner has not started", http.StatusServiceUnavailable)
		return
	}
	pod, ok := s.pods.lookup(ns, name)
	if !ok {
		http.Error(w, "no pod "+ns+"/"+name+" runs on this node", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	if pod == nil {
		return // a pod without a program has no output
	}
	f, err := os.Open(pod.CRILogPath(container))
	if errors.Is(err, os.ErrNotExist) {
		return // not started yet
	}
	if err != nil {
		http.Error(w, "reading the log failed", http.StatusInternalServerError)
		return
	}
	defer f.Close()
	out := io.Writer(w)
	if q.limitBytes > 0 {
		out = &limitWriter{w: w, n: q.limitBytes}
	}
	serveLog(r, w, out, f, q, func() bool {
		_, running := s.pods.lookup(ns, name)
		return running
	})
}

// serveLog writes the log's lines that the query selects, then, when
// following, the lines that come until the request ends or the pod stops.
func serveLog(r *http.Request, w http.ResponseWriter, out io.Writer, f *os.File, q logQuery, running func() bool) {
	br := bufio.NewReader(f)
	var lines [][]byte
	var rest []byte
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			rest = line
			break
		}
		lines = append(lines, line)
	}
	if q.tailLines >= 0 && len(lines) > q.tailLines {
		lines = lines[len(lines)-q.tailLines:]
	}
	for _, l := range lines {
		if writeLogLine(out, l, q) != nil {
			return
		}
	}
	if !q.follow {
		return
	}
	flusher, _ := w.(http.Flusher)
	for running() {
		if flusher != nil {
			flusher.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(followPoll):
		}
		for {
			line, err := br.ReadBytes('\n')
			rest = append(rest, line...)
			if err != nil {
				break
			}
			if writeLogLine(out, rest, q) != nil {
				return
			}
			rest = nil
		}
	}
}

// writeLogLine writes one CRI log line ("TIME STREAM TAG TEXT\n") as
// kubelet does: TEXT, with a newline for a whole line (tag F), after TIME
// when timestamps are asked for; nothing when it is older than since.
func writeLogLine(out io.Writer, line []byte, q logQuery) error {
	fields := bytes.SplitN(bytes.TrimSuffix(line, []byte("\n")), []byte(" "), 4)
	if len(fields) < 3 {
		return nil // not a CRI log line
	}
	ts, err := time.Parse(time.RFC3339Nano, string(fields[0]))
	if err != nil || ts.Before(q.since) {
		return nil
	}
	var text []byte
	if len(fields) == 4 {
		text = fields[3]
	}
	var b bytes.Buffer
	if q.timestamps {
		b.Write(fields[0])
		b.WriteByte(' ')
	}
	b.Write(text)
	if string(fields[2]) == "F" {
		b.WriteByte('\n')
	}
	_, err = out.Write(b.Bytes())
	return err
}

// parseLogQuery reads the query of a log request.
func parseLogQuery(r *http.Request) (logQuery, error) {
	v := r.URL.Query()
	q := logQuery{tailLines: -1}
	var err error
	if s := v.Get("sinceTime"); s != "" {
		if q.since, err = time.Parse(time.RFC3339, s); err != nil {
			return q, fmt.Errorf("sinceTime: %w", err)
		}
	}
	if s := v.Get("sinceSeconds"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return q, errors.New("sinceSeconds: not a number of seconds")
		}
		q.since = time.Now().Add(-time.Duration(n) * time.Second)
	}
	for name, dst := range map[string]*int{"tailLines": &q.tailLines, "limitBytes": &q.limitBytes} {
		if s := v.Get(name); s != "" {
			if *dst, err = strconv.Atoi(s); err != nil || *dst < 0 {
				return q, errors.New(name + ": not a number")
			}
		}
	}
	q.timestamps = v.Get("timestamps") == "true"
	q.follow = v.Get("follow") == "true"
	return q, nil
}

// limitWriter writes at most n bytes, then fails.
type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, io.ErrShortWrite
	}
	if len(p) > l.n {
		p = p[:l.n]
	}
	n, err := l.w.Write(p)
	l.n -= n
	if err == nil && l.n <= 0 {
		err = io.ErrShortWrite
	}
	return n, err
}
