package exchange

import "net/http"

// EditHeader returns a ResponseWriter that runs edit on the response
// headers just before they are written: at WriteHeader, or at the first
// Write without one. Policies that must have the last word on a response
// header (CORS, response header changes) use it, so that what the member
// sent cannot override them. Flushes, hijacking (through Unwrap) and
// recorded statuses pass through.
func EditHeader(w http.ResponseWriter, edit func(http.Header)) http.ResponseWriter {
	return &headerEditor{ResponseWriter: w, edit: edit}
}

type headerEditor struct {
	http.ResponseWriter
	edit  func(http.Header)
	wrote bool
}

func (e *headerEditor) WriteHeader(code int) {
	if !e.wrote && code >= 200 {
		e.wrote = true
		e.edit(e.Header())
	}
	e.ResponseWriter.WriteHeader(code)
}

func (e *headerEditor) Write(p []byte) (int, error) {
	if !e.wrote {
		e.WriteHeader(http.StatusOK)
	}
	return e.ResponseWriter.Write(p)
}

// Flush sends buffered data to the client.
func (e *headerEditor) Flush() {
	if !e.wrote {
		e.WriteHeader(http.StatusOK)
	}
	if f, ok := e.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// RecordStatus passes a recorded status on.
func (e *headerEditor) RecordStatus(code int) { RecordStatus(e.ResponseWriter, code) }

// Unwrap returns the wrapped ResponseWriter.
func (e *headerEditor) Unwrap() http.ResponseWriter { return e.ResponseWriter }
