package admin

import (
	"strings"
	"testing"
)

func TestWritePools(t *testing.T) {
	tests := []struct {
		name  string
		pools []Pool
		want  string
	}{
		{name: "no pools", want: "POOL  MEMBERS  IN FLIGHT  FAILURES  RETRIES  SOURCE  BALANCE  SCHEME\n"},
		{name: "two pools", pools: []Pool{
			{Name: "api", MembersFrom: "api", Balance: "least_conn", Scheme: "h2c", Retries: 12, InFlight: 3, Failures: 1, MemberCount: 10},
			{Name: "web-frontend", MembersFrom: "static", Balance: "round_robin", Scheme: "http", MemberCount: 2},
		}, want: "" +
			"POOL          MEMBERS  IN FLIGHT  FAILURES  RETRIES  SOURCE  BALANCE      SCHEME\n" +
			"api           10       3          1         12       api     least_conn   h2c\n" +
			"web-frontend  2        0          0         0        static  round_robin  http\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := WritePools(&b, tt.pools); err != nil {
				t.Fatalf("WritePools: %v", err)
			}
			if got := b.String(); got != tt.want {
				t.Errorf("WritePools wrote\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestWritePool(t *testing.T) {
	tests := []struct {
		name string
		pool Pool
		want string
	}{
		{name: "no members",
			pool: Pool{Name: "api", MembersFrom: "api", Balance: "hash", Scheme: "https", Retries: 2},
			want: "pool api: 0 members, members_from api, balance hash, scheme https, 2 retries\n" +
				"no members: requests to this pool are answered 503\n"},
		{name: "members",
			pool: Pool{Name: "web", MembersFrom: "static", Balance: "round_robin", Scheme: "http", Retries: 5, MemberCount: 2,
				Members: []Member{
					{Address: "10.0.0.1:8080", Weight: 1, InFlight: 2, Requests: 100, Failures: 3},
					{Address: "[2001:db8::1]:80", Weight: 1000, Requests: 7},
				}},
			want: "pool web: 2 members, members_from static, balance round_robin, scheme http, 5 retries\n" +
				"ADDRESS           WEIGHT  IN FLIGHT  REQUESTS  FAILURES\n" +
				"10.0.0.1:8080     1       2          100       3\n" +
				"[2001:db8::1]:80  1000    0          7         0\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := WritePool(&b, tt.pool); err != nil {
				t.Fatalf("WritePool: %v", err)
			}
			if got := b.String(); got != tt.want {
				t.Errorf("WritePool wrote\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestConfigErrorMessage(t *testing.T) {
	tests := []struct {
		name     string
		problems []string
		want     string
	}{
		{name: "one", problems: []string{"a: bad"}, want: "configuration refused: a: bad"},
		{name: "two", problems: []string{"a: bad", "b: worse"}, want: "configuration refused:\n  a: bad\n  b: worse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (&ConfigError{Problems: tt.problems}).Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}
