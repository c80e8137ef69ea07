package httpecho

import (
	"net/http"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// setEchoHeaders adds to h the response headers that the values of
// X-Echo-Set-Header ask for: each value is a comma-separated list of
// "Name: value" items. A name asked for twice gets one header whose values
// are joined with ",". Names keep the case they were sent in (echo-basic
// writes them into the map directly); items without a valid name or with
// an invalid value are left out.
func setEchoHeaders(h http.Header, values []string) {
	for _, list := range values {
		for item := range strings.SplitSeq(list, ",") {
			name, value, _ := strings.Cut(strings.TrimSpace(item), ":")
			value = strings.TrimSpace(value)
			if !httpguts.ValidHeaderFieldName(name) || !httpguts.ValidHeaderFieldValue(value) {
				continue
			}
			if old := h[name]; len(old) > 0 {
				old[0] += "," + value
			} else {
				h[name] = []string{value}
			}
		}
	}
}
