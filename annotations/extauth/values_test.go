package extauth

import (
	"strings"
	"testing"
)

func TestValidateAuthURL(t *testing.T) {
	tests := []struct {
		name, url, err string
	}{
		{"a cluster name with a port", "http://oauth2-proxy.auth.svc.cluster.local:4180/oauth2/auth", ""},
		{"an IPv6 address", "https://[2001:db8::7]:8443/check?x=1", ""},
		{"upper case in the host", "http://Auth.Example.com/", ""},
		{"a wildcard host", "http://*.example.com/", "the host must be a DNS name"},
		{"port zero", "http://auth:0/", "the host must be a DNS name"},
		{"port too big", "http://auth:70000/", "the host must be a DNS name"},
		{"an empty port", "http://auth:/", "the host must be a DNS name"},
		{"no host", "http:///check", "the host must be a DNS name"},
		{"relative", "/oauth2/auth", "must be an http or https URL"},
		{"a fragment", "http://auth/#x", "must not hold a fragment"},
		{"white space", "http://auth/a b", "whitespace"},
		{"a user", "http://u@auth/", "must not hold a user"},
		{"a variable in braces", "http://auth/${request_uri}", ""},
		{"the object's own host", "https://$host/oauth2/auth", ""},
		{"the object's own host with a port", "https://$host:8443/oauth2/auth", "alone, without port"},
		{"a host from the request URI", "https://$request_uri/", "alone, without port"},
		{"an unknown variable", "http://auth/?u=$remote_user", "$remote_user, which is not interpolated"},
		{"a variable scheme", "$scheme://auth/", "must be an http or https URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := validateAuthURL(tc.url)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("validateAuthURL(%q) = %v, want nil", tc.url, err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("validateAuthURL(%q) = %v, want an error containing %q", tc.url, err, tc.err)
			}
		})
	}
}
