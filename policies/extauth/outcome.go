package extauth

import (
	"net/http"
	"slices"
)

// outcome is what the service decided for a request, kept as the policy
// uses it. An outcome may be shared by many requests through the cache:
// nothing changes it once made, and its value slices have no spare
// capacity, so that appending to a request's header never writes into it.
type outcome struct {
	// status is 200 for any 2xx, 401, 403, or 500 for everything else.
	status int
	// copied are the values of Handler.copyHeaders in a 2xx, in order
	// (nil: the answer has none).
	copied [][]string
	// challenge is the WWW-Authenticate of a 401 or 403.
	challenge []string
	// cookies is the answer's Set-Cookie.
	cookies []string
}

// failed is the outcome of a subrequest that could not judge.
var failed = &outcome{status: http.StatusInternalServerError}

// outcomeOf reads the service's answer.
func (h *Handler) outcomeOf(resp *http.Response) *outcome {
	switch code := resp.StatusCode; {
	case code >= 200 && code <= 299:
		o := &outcome{status: http.StatusOK, copied: make([][]string, len(h.copyHeaders)), cookies: clipped(resp.Header["Set-Cookie"])}
		for i, name := range h.copyHeaders {
			o.copied[i] = clipped(resp.Header[name])
		}
		return o
	case code == http.StatusUnauthorized, code == http.StatusForbidden:
		return &outcome{status: code, challenge: clipped(resp.Header["Www-Authenticate"]), cookies: clipped(resp.Header["Set-Cookie"])}
	}
	return failed
}

func clipped(values []string) []string {
	if len(values) == 0 {
		return nil
	}
	return slices.Clip(slices.Clone(values))
}
