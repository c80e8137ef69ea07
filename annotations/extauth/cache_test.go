package extauth

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseDurations(t *testing.T) {
	ptr := func(d time.Duration) *time.Duration { return &d }
	show := func(d *time.Duration) string {
		if d == nil {
			return "-"
		}
		return d.String()
	}
	tests := []struct {
		name, value                      string
		allowed, unauthorized, forbidden *time.Duration
		err                              string
	}{
		{"ingress-nginx's default", "200 202 401 5m", ptr(5 * time.Minute), ptr(5 * time.Minute), nil, ""},
		{"no code is 200", "10m", ptr(10 * time.Minute), nil, nil, ""},
		{"any is every class", "any 1m", ptr(time.Minute), ptr(time.Minute), ptr(time.Minute), ""},
		{"times add up", "403 1h 30m", nil, nil, ptr(90 * time.Minute), ""},
		{"every unit", "200 1s 1ms, 401 1h, 403 1d", ptr(time.Second + time.Millisecond), ptr(time.Hour), ptr(24 * time.Hour), ""},
		{"other codes are not remembered", "200 1m, 500 404 1h", ptr(time.Minute), nil, nil, ""},
		{"the same time twice in a class", "200 1m, 204 1m", ptr(time.Minute), nil, nil, ""},
		{"two times in a class", "200 1m, 204 2m", nil, nil, nil, "status 204 is given 2m0s"},
		{"a code after the time", "5m 200", nil, nil, nil, `"200" is neither a status code before the time`},
		{"no time", "200 401", nil, nil, nil, "has no time"},
		{"no entry", " , ", nil, nil, nil, "has no entry"},
		{"a week is too long", "1w", nil, nil, nil, "1w is more than 24h"},
		{"a sum too long", "23h 2h", nil, nil, nil, "25h0m0s is more than 24h"},
		{"a huge number", "99999999999999999999s", nil, nil, nil, "is more than 24h"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := parseDurations(tc.value)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := []string{show(d.allowed), show(d.unauthorized), show(d.forbidden)}
			want := []string{show(tc.allowed), show(tc.unauthorized), show(tc.forbidden)}
			if !slices.Equal(got, want) {
				t.Errorf("durations %v, want %v", got, want)
			}
		})
	}
}

func TestKeyParts(t *testing.T) {
	tests := []struct {
		name, value string
		want        []string
		err         string
	}{
		{"oauth2-proxy's cookie", "$cookie__oauth2_proxy", []string{"cookie:_oauth2_proxy"}, ""},
		{"a header and text", "auth:$http_authorization;", []string{"header:Authorization"}, ""},
		{"braces and repeats", "${host}$http_host$host", []string{"host"}, ""},
		{"a header of several words", "$http_x_forwarded_user", []string{"header:X-Forwarded-User"}, ""},
		{"a refused variable", "$http_authorization$remote_user", nil, "$remote_user is not a variable"},
		{"an empty header name", "$http_", nil, "$http_ is not a variable"},
		{"no variable", "static", nil, "holds no nginx variable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := keyParts(tc.value)
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			case tc.err == "" && err != nil:
				t.Fatal(err)
			case !slices.Equal(got, tc.want):
				t.Errorf("parts %q, want %q", got, tc.want)
			}
		})
	}
}
