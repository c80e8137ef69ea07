package httpecho

import (
	"net/url"
	"strings"
	"testing"

	confhttp "sigs.k8s.io/gateway-api/conformance/utils/http"
)

func urlOf(scheme, addr, path string) url.URL {
	p, q, _ := strings.Cut(path, "?")
	return url.URL{Scheme: scheme, Host: addr, Path: p, RawQuery: q}
}

// TestRetry replays the suite's HTTPRouteRetry sequence against one backend
// directly: each try is one request, as a gateway's retries would be.
func TestRetry(t *testing.T) {
	addr := serve(t, Plain, nil)
	tests := []struct {
		name  string
		query url.Values
		want  []int // status per try; 0 is a connection reset
	}{
		{"500 twice then echo", url.Values{"uuid": {"a"}, "succeedAfter": {"2"}, "responseCode": {"500"}}, []int{500, 500, 200, 200}},
		{"503 with delayRetry", url.Values{"uuid": {"b"}, "succeedAfter": {"1"}, "responseCode": {"503"}, "delayRetry": {"1ms"}}, []int{503, 200}},
		{"reset once", url.Values{"uuid": {"c"}, "succeedAfter": {"1"}}, []int{0, 200}},
		{"no failure", url.Values{"uuid": {"d"}, "succeedAfter": {"0"}}, []int{200}},
		{"no uuid", url.Values{"succeedAfter": {"1"}}, []int{400, 400}},
		{"no succeedAfter", url.Values{"uuid": {"e"}}, []int{400}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := "/retry/code-500-attempts-3?" + tc.query.Encode()
			for i, want := range tc.want {
				expected := confhttp.ExpectedResponse{
					Request:   confhttp.Request{Path: path},
					Response:  confhttp.Response{StatusCodes: []int{want}},
					Backend:   "infra-backend-v1",
					Namespace: "gateway-conformance-infra",
				}
				req := confhttp.MakeRequest(t, &expected, addr, "HTTP", "http")
				cReq, cRes, err := tripper().CaptureRoundTrip(req)
				if want == 0 {
					if err == nil {
						t.Fatalf("try %d: status %d, want a connection reset", i+1, cRes.StatusCode)
					}
					continue
				}
				if err != nil {
					t.Fatalf("try %d: %v", i+1, err)
				}
				if err := confhttp.CompareRoundTrip(t, &req, cReq, cRes, expected); err != nil {
					t.Fatalf("try %d: %v", i+1, err)
				}
			}
		})
	}
}
