package mirror

import (
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	tests := []struct {
		value string
		want  target // when problem is ""
		// problem is part of the error; "" for none.
		problem string
	}{
		{value: "https://test.env.com$request_uri", want: target{scheme: "https", host: "test.env.com", port: "443", requestURI: true}},
		{value: "http://test.env.com${request_uri}", want: target{scheme: "http", host: "test.env.com", port: "80", requestURI: true}},
		{value: "https://1.2.3.4:8443$request_uri", want: target{scheme: "https", host: "1.2.3.4", port: "8443", requestURI: true}},
		{value: "http://[fd00::1]$request_uri", want: target{scheme: "http", host: "[fd00::1]", port: "80", requestURI: true}},
		{value: "http://[fd00::1]:81/", want: target{scheme: "http", host: "[fd00::1]", port: "81", path: "/"}},
		{value: "http://shadow.example/a%2Fb%20c", want: target{scheme: "http", host: "shadow.example", port: "80", path: "/a/b c"}},
		{value: "https://shadow.example", problem: "has no path"},
		{value: "https://shadow.example/p$request_uri", problem: "a path before $request_uri is not provided"},
		{value: "https://shadow.example$uri", problem: "the only nginx variable a target may hold is $request_uri"},
		{value: "https://shadow.example$request_uri$is_args", problem: "the only nginx variable"},
		{value: "https://$host$request_uri", problem: "the only nginx variable"},
		{value: "ftp://shadow.example/", problem: "is not an http:// or https:// URL"},
		{value: "HTTP://shadow.example/", problem: "is not an http:// or https:// URL"},
		{value: "shadow.example/", problem: "is not an http:// or https:// URL"},
		{value: "http://user@shadow.example/", problem: "no query, fragment, user or space"},
		{value: "http://shadow.example/?a=1", problem: "no query"},
		{value: "http://shadow.example/#x", problem: "no query"},
		{value: "http://shadow.example:0/", problem: "the port must be 1..65535"},
		{value: "http://shadow.example:99999/", problem: "the port must be 1..65535"},
		{value: "http://fd00::1/", problem: "an IPv6 address goes in brackets"},
		{value: "http://*.example/", problem: "is a wildcard"},
		{value: "http:///path", problem: "is not a DNS name"},
		{value: "http://shadow.example/%zz", problem: "the path is not a valid URL path"},
		{value: "http://shadow.example/%0d%0a", problem: "control characters"},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			got, err := parseTarget(tc.value)
			if tc.problem != "" {
				if err == nil || !strings.Contains(err.Error(), tc.problem) {
					t.Fatalf("error %v, want one containing %q", err, tc.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *got != tc.want {
				t.Errorf("got %+v, want %+v", *got, tc.want)
			}
		})
	}
}

func TestValidateHost(t *testing.T) {
	for _, ok := range []string{"shadow.example", "shadow.example:8080", "10.0.0.1", "[fd00::1]", "[fd00::1]:81"} {
		if err := validateHost(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "$host", "a b", "http://a", "a/b", "fd00::1", "[10.0.0.1]", "a:0", "*.example", "[fe80::1%eth0]"} {
		if err := validateHost(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
