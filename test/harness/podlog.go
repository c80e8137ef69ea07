package harness

import (
	"bufio"
	"errors"
	"io"
	"os"
	"sync"
	"time"
)

// criChunk is the longest text of one CRI log line; longer lines are
// split into parts (tag P), as container runtimes split them.
const criChunk = 16 * 1024

// criDrain bounds how long a container's exit waits for the rest of its
// output: a process it left behind may hold the pipe open.
const criDrain = time.Second

// criLog copies a container's stdout and stderr, line by line, both to its
// plain log and to its CRI log.
type criLog struct {
	plain, cri *os.File
	mu         sync.Mutex // serializes the lines of the two streams
	wg         sync.WaitGroup
}

// openCRILog opens both logs of c and returns the write ends of the pipes
// the container's process writes its stdout and stderr to; the caller
// closes them once the process has started.
func openCRILog(plainPath, criPath string) (*criLog, *os.File, *os.File, error) {
	plain, err := os.OpenFile(plainPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, nil, err
	}
	cri, err := os.OpenFile(criPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		plain.Close()
		return nil, nil, nil, err
	}
	l := &criLog{plain: plain, cri: cri}
	var writers [2]*os.File
	for i, stream := range []string{"stdout", "stderr"} {
		r, w, err := os.Pipe()
		if err != nil {
			for _, w := range writers[:i] {
				w.Close()
			}
			l.close()
			return nil, nil, nil, err
		}
		writers[i] = w
		l.wg.Go(func() { l.copy(r, stream) })
	}
	return l, writers[0], writers[1], nil
}

// copy writes what r yields until it ends.
func (l *criLog) copy(r *os.File, stream string) {
	defer r.Close()
	br := bufio.NewReaderSize(r, criChunk)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			tag := "F"
			if errors.Is(err, bufio.ErrBufferFull) {
				tag = "P"
			}
			l.write(stream, tag, line)
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// write writes one line (or part of one) to both logs.
func (l *criLog) write(stream, tag string, text []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.plain.Write(text)
	if n := len(text); n > 0 && text[n-1] == '\n' {
		text = text[:n-1]
	}
	prefix := time.Now().UTC().Format(time.RFC3339Nano) + " " + stream + " " + tag + " "
	_, _ = io.WriteString(l.cri, prefix+string(text)+"\n")
}

// wait waits for the output of the ended process, at most criDrain, and
// closes the logs once both copies have ended.
func (l *criLog) wait() {
	done := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		l.close()
	case <-time.After(criDrain):
		go func() {
			<-done
			l.close()
		}()
	}
}

func (l *criLog) close() {
	l.plain.Close()
	l.cri.Close()
}
