package basicauth

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/GehirnInc/crypt"
	"github.com/GehirnInc/crypt/apr1_crypt"
	"github.com/GehirnInc/crypt/sha256_crypt"
	"github.com/GehirnInc/crypt/sha512_crypt"
	"golang.org/x/crypto/bcrypt"
)

// File is a loaded htpasswd file: its users and their checked hashes. It is
// immutable and safe for concurrent use.
type File struct {
	users  map[string]entry
	digest [32]byte
}

// Load reads the htpasswd file at path and checks it with Parse, once per
// configuration load and never per request. Errors name the path.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse checks htpasswd content: one "user:hash" line each, blank lines and
// lines starting with '#' skipped, CRLF line ends tolerated, and, as nginx
// does, anything after a second ':' ignored. Hashes must be bcrypt ($2a$,
// $2b$, $2y$), SHA-256 crypt ($5$), SHA-512 crypt ($6$) or Apache MD5
// ($apr1$), and well-formed. An error is "<name> line <n>: <problem>" and
// never quotes the line, so that neither a user name nor a hash reaches a
// log. Content without any user is an error too.
func Parse(name string, data []byte) (*File, error) {
	f := &File{users: make(map[string]entry), digest: sha256.Sum256(data)}
	firstLine := make(map[string]int)
	rest := bytes.TrimPrefix(data, []byte("\ufeff"))
	for n := 1; len(rest) > 0; n++ {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(bytes.TrimSpace(line)) == 0 || line[0] == '#' {
			continue
		}
		user, e, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, n, err)
		}
		if first, dup := firstLine[user]; dup {
			return nil, fmt.Errorf("%s line %d: duplicate user, first defined on line %d", name, n, first)
		}
		firstLine[user] = n
		f.users[user] = e
	}
	if len(f.users) == 0 {
		return nil, fmt.Errorf("%s: no users", name)
	}
	return f, nil
}

// Digest returns the SHA-256 of the content, which identifies the file
// across reloads: the daemon keeps one Cache per digest.
func (f *File) Digest() [32]byte { return f.digest }

// Users returns the number of users in the file.
func (f *File) Users() int { return len(f.users) }

// lookup returns the entry of user.
func (f *File) lookup(user []byte) (entry, bool) {
	e, ok := f.users[string(user)]
	return e, ok
}

// parseLine splits a non-blank, non-comment line and checks both halves.
func parseLine(line []byte) (string, entry, error) {
	user, hash, ok := bytes.Cut(line, []byte(":"))
	if !ok {
		return "", entry{}, errors.New("malformed line: no ':' between user and hash")
	}
	if len(user) == 0 {
		return "", entry{}, errors.New("empty user name")
	}
	if bytes.ContainsFunc(user, isControl) {
		return "", entry{}, errors.New("user name contains a control character")
	}
	hash, _, _ = bytes.Cut(hash, []byte(":"))
	e, err := parseHash(hash)
	return string(user), e, err
}

// isControl reports whether r is an ASCII control character.
func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// scheme is a supported hash kind.
type scheme uint8

const (
	schemeBcrypt scheme = iota + 1
	schemeSHA256
	schemeSHA512
	schemeAPR1
)

// entry is one user's checked hash.
type entry struct {
	scheme scheme
	hash   []byte // the whole hash as in the file
	// setting is, for the crypt schemes, the hash up to its last '$': the
	// prefix, the rounds and the salt.
	setting []byte
}

// cryptShape describes one crypt(3) scheme's hash: $id$[rounds=N$]salt$sum.
type cryptShape struct {
	scheme  scheme
	prefix  string
	name    string
	saltMax int
	sumLen  int
	rounds  bool // accepts "rounds=N$"
}

var cryptShapes = []cryptShape{
	{scheme: schemeSHA256, prefix: "$5$", name: "SHA-256 crypt", saltMax: 16, sumLen: 43, rounds: true},
	{scheme: schemeSHA512, prefix: "$6$", name: "SHA-512 crypt", saltMax: 16, sumLen: 86, rounds: true},
	{scheme: schemeAPR1, prefix: "$apr1$", name: "Apache MD5", saltMax: 8, sumLen: 22},
}

// parseHash classifies a hash and checks its shape. Its errors name the
// kind, never the hash.
func parseHash(h []byte) (entry, error) {
	switch {
	case len(h) == 0:
		return entry{}, errors.New("empty password hash")
	case bytes.HasPrefix(h, []byte("$2a$")), bytes.HasPrefix(h, []byte("$2b$")), bytes.HasPrefix(h, []byte("$2y$")):
		return parseBcrypt(h)
	case bytes.HasPrefix(h, []byte("$1$")):
		return entry{}, errors.New("MD5-crypt ($1$) hash is unsupported: use bcrypt (htpasswd -B)")
	case bytes.HasPrefix(h, []byte("{SHA}")):
		return entry{}, errors.New("{SHA} hash is unsupported (unsalted SHA-1): use bcrypt (htpasswd -B)")
	}
	for _, s := range cryptShapes {
		if bytes.HasPrefix(h, []byte(s.prefix)) {
			return s.parse(h)
		}
	}
	switch {
	case h[0] == '$' || h[0] == '{':
		return entry{}, errors.New("unsupported hash scheme: use bcrypt ($2y$), SHA-256 crypt ($5$), SHA-512 crypt ($6$) or Apache MD5 ($apr1$)")
	case len(h) == 13 && allCrypt64(h):
		return entry{}, errors.New("DES crypt hash is unsupported: use bcrypt (htpasswd -B)")
	}
	return entry{}, errors.New("plain-text password refused: use bcrypt (htpasswd -B)")
}

// parseBcrypt checks $2x$NN$ (NN two digits) followed by 53 characters of bcrypt's base64
// (22 of salt, 31 of sum), and that x/crypto/bcrypt parses the cost.
func parseBcrypt(h []byte) (entry, error) {
	bad := errors.New("malformed bcrypt hash")
	if len(h) != 60 || !allDigits(h[4:6]) || h[6] != '$' || !allCrypt64(h[7:]) {
		return entry{}, bad
	}
	cost, err := bcrypt.Cost(h)
	if err != nil {
		return entry{}, bad
	}
	if cost > MaxBcryptCost {
		return entry{}, fmt.Errorf("bcrypt cost %d is above %d: each wrong password would cost seconds of CPU", cost, MaxBcryptCost)
	}
	return entry{scheme: schemeBcrypt, hash: bytes.Clone(h)}, nil
}

// Work limits of hashes accepted at load: a wrong password is verified in
// full on every try, so a very costly hash lets anyone spend the proxy's CPU.
// Both limits are above what htpasswd, passlib and libxcrypt use by default.
const (
	MaxBcryptCost  = 14
	MaxCryptRounds = 1_000_000
	minCryptRounds = 1000
)

// parse checks a crypt(3) hash as libxcrypt accepts it: rounds (when the
// scheme has them) in decimal without leading zeros, at least 1000 and at
// most MaxCryptRounds, a salt of at most saltMax characters and a sum of exactly
// sumLen, both in crypt's base64 alphabet.
func (s cryptShape) parse(h []byte) (entry, error) {
	bad := fmt.Errorf("malformed %s hash", s.name)
	rest := h[len(s.prefix):]
	if s.rounds && bytes.HasPrefix(rest, []byte("rounds=")) {
		var r []byte
		r, rest, _ = bytes.Cut(rest[len("rounds="):], []byte("$"))
		n, ok := parseRounds(r)
		switch {
		case !ok:
			return entry{}, bad
		case n > MaxCryptRounds:
			return entry{}, fmt.Errorf("%s rounds %d are above %d: each wrong password would cost seconds of CPU", s.name, n, MaxCryptRounds)
		}
	}
	salt, sum, ok := bytes.Cut(rest, []byte("$"))
	if !ok || len(salt) > s.saltMax || !allCrypt64(salt) || len(sum) != s.sumLen || !allCrypt64(sum) {
		return entry{}, bad
	}
	h = bytes.Clone(h)
	return entry{scheme: s.scheme, hash: h, setting: h[:len(h)-len(sum)-1]}, nil
}

// parseRounds parses a canonical decimal of at least 1000 rounds.
func parseRounds(r []byte) (int, bool) {
	if len(r) == 0 || len(r) > 9 || r[0] == '0' || !allDigits(r) {
		return 0, false
	}
	n, err := strconv.Atoi(string(r))
	return n, err == nil && n >= minCryptRounds
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// allCrypt64 reports whether b holds only characters of crypt's base64
// alphabet, ./0-9A-Za-z (bcrypt's is the same set in another order).
func allCrypt64(b []byte) bool {
	for _, c := range b {
		if !(c == '.' || c == '/' || '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

// The crypt(3) implementations only read their configuration, so one of
// each serves all goroutines.
var (
	sha256Crypter = sha256_crypt.New()
	sha512Crypter = sha512_crypt.New()
	apr1Crypter   = apr1_crypt.New()
)

// verify reports whether password matches e, comparing in constant time.
func (e entry) verify(password []byte) bool {
	switch e.scheme {
	case schemeBcrypt:
		return bcrypt.CompareHashAndPassword(e.hash, password) == nil
	case schemeSHA256:
		return cryptVerify(sha256Crypter, e, password)
	case schemeSHA512:
		return cryptVerify(sha512Crypter, e, password)
	case schemeAPR1:
		return cryptVerify(apr1Crypter, e, password)
	}
	return false
}

// cryptVerify hashes password with e's setting and compares the result with
// e's hash in constant time. It does not use Crypter.Verify, which passes
// the whole hash as the salt setting and so, for a "rounds=N$" hash with a
// salt shorter than the maximum, hashes with a wrong salt and refuses the
// right password.
func cryptVerify(c crypt.Crypter, e entry, password []byte) bool {
	got, err := c.Generate(password, e.setting)
	return err == nil && subtle.ConstantTimeCompare([]byte(got), e.hash) == 1
}
