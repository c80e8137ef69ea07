package globalratelimit

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

func TestParseKey(t *testing.T) {
	addr := config.KeyPart{ClientAddress: true}
	tests := []struct {
		in      string
		want    []config.KeyPart
		wantErr string
	}{
		{in: "$remote_addr", want: []config.KeyPart{addr}},
		{in: "$binary_remote_addr", want: []config.KeyPart{addr}},
		{in: "${remote_addr}-${http_x_api_client}", want: []config.KeyPart{addr, {Text: "-"}, {Header: "x-api-client"}}},
		{in: "$remote_addr$http_x_user", want: []config.KeyPart{addr, {Header: "x-user"}}},
		{in: "user:$cookie_session_id!", want: []config.KeyPart{{Text: "user:"}, {Cookie: "session_id"}, {Text: "!"}}},
		{in: "fixed", want: []config.KeyPart{{Text: "fixed"}}},
		{in: "$request_uri", wantErr: "$request_uri is not a variable Ramjet counts by"},
		{in: "$http_", wantErr: "$http_ is not a variable"},
		{in: "a$", wantErr: "a $ is not followed by a variable name"},
		{in: "${remote_addr", wantErr: "a ${ is not closed by }"},
		{in: "${a-b}", wantErr: `"a-b" is not a variable name`},
		{in: strings.Repeat("$remote_addr", 17), wantErr: "more than 16 parts"},
		{in: "a\tb", wantErr: "printable"},
	}
	for _, tc := range tests {
		got, err := ParseKey(tc.in)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || !reflect.DeepEqual(got, tc.want)):
			t.Errorf("%q: %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestNamespaceOf(t *testing.T) {
	if got := namespaceOf(core.Origin{UID: "6f1c-2a3b", Namespace: "shop", Name: "web"}); got != "6f1c2a3b" {
		t.Errorf("with a UID: %q", got)
	}
	if got := namespaceOf(core.Origin{Namespace: "shop", Name: "web.v2"}); got != "shop_web.v2" {
		t.Errorf("without a UID: %q", got)
	}
}
