package http1

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// readResponse reads a response head: in place when it is simple (see
// parseSimpleResponse), with http.ReadResponse otherwise.
func readResponse(br *bufio.Reader, req *http.Request) (*http.Response, int64, error) {
	buf, _ := br.Peek(br.Buffered())
	if resp, bodyLength, size, ok := parseSimpleResponse(buf, req); ok {
		br.Discard(size)
		return resp, bodyLength, nil
	}
	resp, err := http.ReadResponse(br, req)
	return resp, -1, err
}

// parseSimpleResponse parses buf when it holds a whole response head that
// needs none of net/http's care: HTTP/1.1, a final status (200 to 599),
// strictly valid fields, and a body that is absent or delimited by one
// Content-Length (chunked and close-delimited bodies are net/http's). The
// response has no Body yet: bodyLength is the length of the body that
// follows the head's size bytes, 0 for none.
func parseSimpleResponse(buf []byte, req *http.Request) (resp *http.Response, bodyLength int64, size int, ok bool) {
	line, fields, size, ok := splitHead(buf)
	if !ok {
		return nil, 0, 0, false
	}
	code, status, ok := parseStatusLine(line)
	if !ok {
		return nil, 0, 0, false
	}
	length := int64(-1)
	lengthText := ""
	closes := false
	header, ok := parseFields(fields, func(name, value string) (keep, ok bool) {
		switch name {
		case "Connection":
			closes = closes || httpguts.HeaderValuesContainsToken([]string{value}, "close")
		case "Transfer-Encoding":
			return false, false
		case "Content-Length":
			if length >= 0 {
				// A repeated, identical value is kept once, as
				// net/http does; a different one is its to refuse.
				return false, value == lengthText
			}
			n, err := strconv.ParseUint(value, 10, 63)
			if err != nil {
				return false, false
			}
			length, lengthText = int64(n), value
		}
		return true, true
	})
	if !ok {
		return nil, 0, 0, false
	}
	if closes {
		delete(header, "Connection") // as net/http does
	}
	resp = &http.Response{
		Status: status, StatusCode: code,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        header,
		Body:          http.NoBody,
		ContentLength: length,
		Close:         closes,
		Request:       req,
	}
	switch {
	case req.Method == http.MethodHead:
		return resp, 0, size, true
	case code == http.StatusNoContent || code == http.StatusNotModified:
		resp.ContentLength = 0
		return resp, 0, size, true
	case length < 0:
		return nil, 0, 0, false // until the connection closes
	}
	return resp, length, size, true
}

// parseStatusLine splits "HTTP/1.1 200 OK" into 200 and "200 OK", for
// final statuses.
func parseStatusLine(line string) (code int, status string, ok bool) {
	status, found := strings.CutPrefix(line, "HTTP/1.1 ")
	if !found || len(status) < 3 || len(status) > 3 && status[3] != ' ' {
		return 0, "", false
	}
	for i := range 3 {
		if status[i] < '0' || status[i] > '9' {
			return 0, "", false
		}
		code = code*10 + int(status[i]-'0')
	}
	if code < 200 || code > 599 || !httpguts.ValidHeaderFieldValue(status) {
		return 0, "", false
	}
	return code, status, true
}
