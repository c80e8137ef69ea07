package http1

import (
	"bufio"
	"bytes"
	"net/http"
	"net/textproto"
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
	end := bytes.Index(buf, crlfcrlf)
	if end < 0 {
		return nil, 0, 0, false
	}
	head := string(buf[:end+2])
	line, rest, _ := strings.Cut(head, "\r\n")
	code, status, ok := parseStatusLine(line)
	if !ok {
		return nil, 0, 0, false
	}
	fields := strings.Count(rest, "\n")
	header := make(http.Header, fields)
	values := make([]string, fields)
	length := int64(-1)
	lengthText := ""
	for rest != "" {
		line, rest, _ = strings.Cut(rest, "\r\n")
		name, value, found := strings.Cut(line, ":")
		if !found || !validFieldName(name) || !validFieldValue(value) {
			return nil, 0, 0, false
		}
		value = textproto.TrimString(value)
		name = canonicalName(name)
		switch name {
		case "Transfer-Encoding":
			return nil, 0, 0, false
		case "Content-Length":
			if length >= 0 {
				if value != lengthText {
					return nil, 0, 0, false
				}
				continue // a repeated, identical value: kept once, as net/http does
			}
			n, err := strconv.ParseUint(value, 10, 63)
			if err != nil {
				return nil, 0, 0, false
			}
			length, lengthText = int64(n), value
		}
		if vv, seen := header[name]; seen {
			header[name] = append(vv, value)
			continue
		}
		values[0] = value
		header[name] = values[:1:1]
		values = values[1:]
	}
	fixPragmaCacheControl(header)
	closes := httpguts.HeaderValuesContainsToken(header["Connection"], "close")
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
		return resp, 0, end + 4, true
	case code == http.StatusNoContent || code == http.StatusNotModified:
		resp.ContentLength = 0
		return resp, 0, end + 4, true
	case length < 0:
		return nil, 0, 0, false // until the connection closes
	}
	return resp, length, end + 4, true
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
	if code < 200 || code > 599 || !validFieldValue(status) {
		return 0, "", false
	}
	return code, status, true
}
