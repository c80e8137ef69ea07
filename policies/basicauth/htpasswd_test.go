package basicauth

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/GehirnInc/crypt/apr1_crypt"
	"github.com/GehirnInc/crypt/sha256_crypt"
	"github.com/GehirnInc/crypt/sha512_crypt"
	"golang.org/x/crypto/bcrypt"
)

// account is a user of a test htpasswd file with its password.
type account struct {
	kind     string // test name and user name
	password string
	hash     string
}

// Fixed vectors, made by libxcrypt's crypt(3) (through perl's crypt) and by
// `openssl passwd -apr1`, so that the hashes are checked against other
// implementations than the ones this package uses.
var vectors = []account{
	{kind: "bcrypt-2a-vector", password: "secret", hash: "$2a$06$abcdefghijklmnopqrstuuxLa0AkDDSrQ9VwNnETzOsObiucpMYgC"},
	{kind: "bcrypt-2b-vector", password: "secret", hash: "$2b$04$abcdefghijklmnopqrstuu2r9OfJnfCsdneAXAGHnS4UpFFP8WIrW"},
	{kind: "bcrypt-2y-vector", password: "secret", hash: "$2y$05$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a"},
	{kind: "sha256-crypt-vector", password: "secret", hash: "$5$saltsalt$0IyaXrmV7.sGNS6tirgqHLqX/G.FBvgkYA.lpPdS5sA"},
	// With rounds and a salt shorter than 16, crypt.Crypter.Verify would
	// refuse the right password; see cryptVerify.
	{kind: "sha256-crypt-rounds-short-salt-vector", password: "we have a short salt", hash: "$5$rounds=5000$short$yXFnZtv5W.c0hfCiXhMP4uPHO7/7p5nyG8gi1OpauQ."},
	{kind: "sha512-crypt-vector", password: "secret", hash: "$6$saltsalt$TVLlQcbpFVof5W3Yz4DTP6gRstiNuHwwTt6GLc1E5n0U0aDehy0S5knV8wiOQSpT0Y77vwPZN.Pq.H91p5hVO1"},
	{kind: "sha512-crypt-rounds-short-salt-vector", password: "pw", hash: "$6$rounds=5000$short$87VS/BHIlH3ji7NmCrwrVGWE/7XVAw4ehAglCRpkWeCrvMXwNAS7SDvhNm9a7YkLQLiZZW0heXRvpmje1CblV."},
	{kind: "sha512-crypt-empty-salt-vector", password: "pw", hash: "$6$$Z7WSO9A8tKGD2oGB9t2ViKdYTIHgnjMZIbdOJElGnO.QoZE5zDsfnF1WHM.IL2KPxhNG4/v/zU9LBcGhxg5Uy."},
	// Drepper's SHA-crypt specification, test vector 2 for SHA-512.
	{kind: "sha512-crypt-drepper-vector", password: "Hello world!", hash: "$6$rounds=10000$saltstringsaltst$OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/UrjmM0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v."},
	{kind: "apr1-vector", password: "secret", hash: "$apr1$8charsal$r2w4Ipe7gPX8QUCWG2b6J."},
	{kind: "apr1-short-salt-vector", password: "secret", hash: "$apr1$a$PtM1vJaZieHDFk40mKMu6/"},
}

// accounts returns the fixed vectors and hashes generated now, one or more
// of each accepted kind.
func accounts(t testing.TB) []account {
	t.Helper()
	bc := hashBcrypt(t, "bcrypt pass", bcrypt.MinCost)
	generated := []account{
		{kind: "bcrypt-2a", password: "bcrypt pass", hash: bc},
		{kind: "bcrypt-2b", password: "bcrypt pass", hash: "$2b$" + bc[4:]},
		{kind: "bcrypt-2y", password: "bcrypt pass", hash: "$2y$" + bc[4:]},
		{kind: "sha256-crypt", password: "sha256 pass", hash: generate(t, sha256_crypt.New().Generate, "sha256 pass", "")},
		{kind: "sha512-crypt", password: "sha512 pass", hash: generate(t, sha512_crypt.New().Generate, "sha512 pass", "")},
		{kind: "sha512-crypt-rounds", password: "rounds pass", hash: generate(t, sha512_crypt.New().Generate, "rounds pass", "$6$rounds=1000$abc")},
		{kind: "apr1", password: "apr1 pass", hash: generate(t, apr1_crypt.New().Generate, "apr1 pass", "")},
		{kind: "password-with-colons", password: "a:b:c", hash: generate(t, apr1_crypt.New().Generate, "a:b:c", "")},
	}
	return append(generated, vectors...)
}

// vector returns the hash of the fixed vector kind.
func vector(t testing.TB, kind string) string {
	t.Helper()
	for _, v := range vectors {
		if v.kind == kind {
			return v.hash
		}
	}
	t.Fatalf("no vector %q", kind)
	return ""
}

func hashBcrypt(t testing.TB, password string, cost int) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		t.Fatalf("bcrypt: %v", err)
	}
	return string(h)
}

func generate(t testing.TB, gen func(key, salt []byte) (string, error), password, salt string) string {
	t.Helper()
	h, err := gen([]byte(password), []byte(salt))
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	return h
}

// htpasswd returns the file content for accounts.
func htpasswd(accounts []account) []byte {
	var b strings.Builder
	for _, a := range accounts {
		fmt.Fprintf(&b, "%s:%s\n", a.kind, a.hash)
	}
	return []byte(b.String())
}

func TestParseAccepts(t *testing.T) {
	for _, a := range accounts(t) {
		t.Run(a.kind, func(t *testing.T) {
			f, err := Parse("htpasswd", htpasswd([]account{a}))
			if err != nil {
				t.Fatalf("Parse: %v, want no error", err)
			}
			e, ok := f.lookup([]byte(a.kind))
			if !ok {
				t.Fatalf("user %q not found", a.kind)
			}
			if !e.verify([]byte(a.password)) {
				t.Errorf("verify(right password) = false, want true")
			}
			if e.verify([]byte(a.password + "x")) {
				t.Errorf("verify(wrong password) = true, want false")
			}
		})
	}
}

func TestParseLayout(t *testing.T) {
	apr := vector(t, "apr1-vector") // password "secret"
	tests := []struct {
		name      string
		content   string
		wantUsers []string
	}{
		{name: "comments and blank lines", content: "# users\n\nalice:" + apr + "\n   \n#bob:plain\nbob:" + apr + "\n",
			wantUsers: []string{"alice", "bob"}},
		{name: "CRLF", content: "alice:" + apr + "\r\nbob:" + apr + "\r\n", wantUsers: []string{"alice", "bob"}},
		{name: "no final newline", content: "alice:" + apr, wantUsers: []string{"alice"}},
		{name: "byte order mark", content: "\ufeffalice:" + apr + "\n", wantUsers: []string{"alice"}},
		{name: "third field ignored as nginx does", content: "alice:" + apr + ":Alice Liddell\n", wantUsers: []string{"alice"}},
		{name: "user names are case-sensitive", content: "alice:" + apr + "\nAlice:" + apr + "\n", wantUsers: []string{"alice", "Alice"}},
		{name: "UTF-8 user name", content: "zoë:" + apr + "\n", wantUsers: []string{"zoë"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("htpasswd", []byte(tt.content))
			if err != nil {
				t.Fatalf("Parse: %v, want no error", err)
			}
			if got := f.Users(); got != len(tt.wantUsers) {
				t.Errorf("Users() = %d, want %d", got, len(tt.wantUsers))
			}
			for _, u := range tt.wantUsers {
				e, ok := f.lookup([]byte(u))
				if !ok {
					t.Errorf("user %q not found", u)
					continue
				}
				if !e.verify([]byte("secret")) {
					t.Errorf("user %q: verify(right password) = false, want true", u)
				}
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	good := "alice:" + vectors[0].hash + "\n# comment\n\n" // three lines; the bad one is line 4
	const user = "zelda"
	tests := []struct {
		name    string
		hash    string // the bad line is user:hash unless line is set
		line    string
		wantErr string
	}{
		{name: "plain text", hash: "Tr0ub4dor&3",
			wantErr: "htpasswd line 4: plain-text password refused: use bcrypt (htpasswd -B)"},
		{name: "SHA", hash: "{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=",
			wantErr: "htpasswd line 4: {SHA} hash is unsupported (unsalted SHA-1): use bcrypt (htpasswd -B)"},
		{name: "SSHA", hash: "{SSHA}ZmNrbM1UvnI9xt3v2wCyHQ1hiT9YqIrH",
			wantErr: "htpasswd line 4: unsupported hash scheme: use bcrypt ($2y$), SHA-256 crypt ($5$), SHA-512 crypt ($6$) or Apache MD5 ($apr1$)"},
		{name: "DES crypt", hash: "abJnggxhB/yWI",
			wantErr: "htpasswd line 4: DES crypt hash is unsupported: use bcrypt (htpasswd -B)"},
		{name: "MD5 crypt", hash: "$1$abc$Kb85XxsXB.VXinPhbS4431",
			wantErr: "htpasswd line 4: MD5-crypt ($1$) hash is unsupported: use bcrypt (htpasswd -B)"},
		{name: "yescrypt", hash: "$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7",
			wantErr: "htpasswd line 4: unsupported hash scheme: use bcrypt ($2y$), SHA-256 crypt ($5$), SHA-512 crypt ($6$) or Apache MD5 ($apr1$)"},
		{name: "bcrypt 2x", hash: "$2x$05$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a",
			wantErr: "htpasswd line 4: unsupported hash scheme: use bcrypt ($2y$), SHA-256 crypt ($5$), SHA-512 crypt ($6$) or Apache MD5 ($apr1$)"},
		{name: "no colon", line: "zelda-no-colon-Tr0ub4dor",
			wantErr: "htpasswd line 4: malformed line: no ':' between user and hash"},
		{name: "empty user", line: ":" + vectors[0].hash,
			wantErr: "htpasswd line 4: empty user name"},
		{name: "empty hash", hash: "",
			wantErr: "htpasswd line 4: empty password hash"},
		{name: "control character in user", line: "zel\x00da:" + vectors[0].hash,
			wantErr: "htpasswd line 4: user name contains a control character"},
		{name: "duplicate user", line: "alice:" + vectors[1].hash,
			wantErr: "htpasswd line 4: duplicate user, first defined on line 1"},
		{name: "bcrypt truncated", hash: "$2y$05$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0",
			wantErr: "htpasswd line 4: malformed bcrypt hash"},
		{name: "bcrypt trailing space", hash: "$2y$05$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a ",
			wantErr: "htpasswd line 4: malformed bcrypt hash"},
		{name: "bcrypt cost out of range", hash: "$2y$32$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a",
			wantErr: "htpasswd line 4: malformed bcrypt hash"},
		{name: "bcrypt cost too low", hash: "$2y$03$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a",
			wantErr: "htpasswd line 4: malformed bcrypt hash"},
		{name: "bcrypt cost with sign", hash: "$2y$+5$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a",
			wantErr: "htpasswd line 4: malformed bcrypt hash"},
		{name: "bcrypt bad character", hash: "$2y$05$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0!",
			wantErr: "htpasswd line 4: malformed bcrypt hash"},
		{name: "sha512 short sum", hash: "$6$saltsalt$TVLlQcbpFVof5W3Yz4DTP6gRstiNuHwwTt6GLc1E5n0U0aDehy0S5knV8wiOQSpT0Y77vwPZN.Pq.H91p5hVO",
			wantErr: "htpasswd line 4: malformed SHA-512 crypt hash"},
		{name: "sha512 no sum", hash: "$6$saltsalt",
			wantErr: "htpasswd line 4: malformed SHA-512 crypt hash"},
		{name: "sha512 salt too long", hash: "$6$saltsaltsaltsalt1$TVLlQcbpFVof5W3Yz4DTP6gRstiNuHwwTt6GLc1E5n0U0aDehy0S5knV8wiOQSpT0Y77vwPZN.Pq.H91p5hVO1",
			wantErr: "htpasswd line 4: malformed SHA-512 crypt hash"},
		{name: "sha512 rounds too low", hash: "$6$rounds=999$short$87VS/BHIlH3ji7NmCrwrVGWE/7XVAw4ehAglCRpkWeCrvMXwNAS7SDvhNm9a7YkLQLiZZW0heXRvpmje1CblV.",
			wantErr: "htpasswd line 4: malformed SHA-512 crypt hash"},
		{name: "sha512 rounds leading zero", hash: "$6$rounds=05000$short$87VS/BHIlH3ji7NmCrwrVGWE/7XVAw4ehAglCRpkWeCrvMXwNAS7SDvhNm9a7YkLQLiZZW0heXRvpmje1CblV.",
			wantErr: "htpasswd line 4: malformed SHA-512 crypt hash"},
		{name: "sha512 rounds with sign", hash: "$6$rounds=+5000$short$87VS/BHIlH3ji7NmCrwrVGWE/7XVAw4ehAglCRpkWeCrvMXwNAS7SDvhNm9a7YkLQLiZZW0heXRvpmje1CblV.",
			wantErr: "htpasswd line 4: malformed SHA-512 crypt hash"},
		{name: "sha512 rounds too high", hash: "$6$rounds=1000000000$short$87VS/BHIlH3ji7NmCrwrVGWE/7XVAw4ehAglCRpkWeCrvMXwNAS7SDvhNm9a7YkLQLiZZW0heXRvpmje1CblV.",
			wantErr: "htpasswd line 4: malformed SHA-512 crypt hash"},
		{name: "sha512 rounds over the work limit", hash: "$6$rounds=1000001$short$87VS/BHIlH3ji7NmCrwrVGWE/7XVAw4ehAglCRpkWeCrvMXwNAS7SDvhNm9a7YkLQLiZZW0heXRvpmje1CblV.",
			wantErr: "htpasswd line 4: SHA-512 crypt rounds 1000001 are above 1000000: each wrong password would cost seconds of CPU"},
		{name: "bcrypt cost over the work limit", hash: "$2y$15$" + strings.Repeat("a", 53),
			wantErr: "htpasswd line 4: bcrypt cost 15 is above 14: each wrong password would cost seconds of CPU"},
		{name: "sha256 bad salt character", hash: "$5$salt:alt$0IyaXrmV7.sGNS6tirgqHLqX/G.FBvgkYA.lpPdS5sA",
			wantErr: "htpasswd line 4: malformed SHA-256 crypt hash"},
		{name: "sha256 extra field", hash: "$5$saltsalt$0IyaXrmV7.sGNS6tirgqHLqX/G.FBvgkYA.lpPdS5sA$x",
			wantErr: "htpasswd line 4: malformed SHA-256 crypt hash"},
		{name: "apr1 salt too long", hash: "$apr1$8charsalt$r2w4Ipe7gPX8QUCWG2b6J.",
			wantErr: "htpasswd line 4: malformed Apache MD5 hash"},
		{name: "apr1 rounds", hash: "$apr1$rounds=1000$8charsal$r2w4Ipe7gPX8QUCWG2b6J.",
			wantErr: "htpasswd line 4: malformed Apache MD5 hash"},
		{name: "apr1 short sum", hash: "$apr1$8charsal$r2w4Ipe7gPX8QUCWG2b6J",
			wantErr: "htpasswd line 4: malformed Apache MD5 hash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := tt.line
			if line == "" {
				line = user + ":" + tt.hash
			}
			f, err := Parse("htpasswd", []byte(good+line+"\nbob:"+vectors[1].hash+"\n"))
			if err == nil {
				t.Fatalf("Parse = %d users, nil error; want error %q", f.Users(), tt.wantErr)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("error = %q, want %q", err, tt.wantErr)
			}
			u, h, _ := strings.Cut(line, ":")
			if u != "" && strings.Contains(err.Error(), u) {
				t.Errorf("error %q contains the user name (or line) %q", err, u)
			}
			if h != "" && strings.Contains(err.Error(), h) {
				t.Errorf("error %q contains the hash %q", err, h)
			}
		})
	}
}

func TestParseNoUsers(t *testing.T) {
	for _, content := range []string{"", "\n\n", "# only a comment\r\n", "\ufeff"} {
		t.Run(fmt.Sprintf("%q", content), func(t *testing.T) {
			f, err := Parse("users.htpasswd", []byte(content))
			want := "users.htpasswd: no users"
			if err == nil || err.Error() != want {
				t.Errorf("Parse = %v, %v; want error %q", f, err, want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	content := htpasswd(vectors)
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(good, content, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("\nalice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("good", func(t *testing.T) {
		f, err := Load(good)
		if err != nil {
			t.Fatalf("Load: %v, want no error", err)
		}
		if got, want := f.Users(), len(vectors); got != want {
			t.Errorf("Users() = %d, want %d", got, want)
		}
		if got, want := f.Digest(), sha256.Sum256(content); got != want {
			t.Errorf("Digest() = %x, want %x", got, want)
		}
	})
	t.Run("bad content names the path and line", func(t *testing.T) {
		_, err := Load(bad)
		want := bad + " line 2: malformed line: no ':' between user and hash"
		if err == nil || err.Error() != want {
			t.Errorf("Load error = %v, want %q", err, want)
		}
	})
	t.Run("missing", func(t *testing.T) {
		_, err := Load(filepath.Join(dir, "missing"))
		if !os.IsNotExist(err) {
			t.Errorf("Load error = %v, want a not-exist error", err)
		}
	})
}

func TestDigest(t *testing.T) {
	a := htpasswd(vectors[:2])
	b := htpasswd(vectors[1:3])
	fa1, err1 := Parse("a", a)
	fa2, err2 := Parse("a again", a)
	fb, err3 := Parse("b", b)
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatalf("Parse errors: %v, %v, %v", err1, err2, err3)
	}
	if fa1.Digest() != fa2.Digest() {
		t.Errorf("same content: digests %x and %x differ, want equal", fa1.Digest(), fa2.Digest())
	}
	if fa1.Digest() == fb.Digest() {
		t.Errorf("different content: digests both %x, want different", fa1.Digest())
	}
}
