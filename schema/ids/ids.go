// Package ids makes the string ids of every record: a short kind prefix and
// 26 lowercase base32 characters (48 bits of milliseconds, 80 random bits).
// They sort by creation time, so lists page by id, and they contain only
// [a-z0-9_], so they are safe as NATS subject tokens.
package ids

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strings"
	"time"
)

const alphabet = "0123456789abcdefghjkmnpqrstvwxyz" // Crockford, lowercase

// New returns prefix + "_" + 26 characters.
func New(prefix string) string { return NewAt(prefix, time.Now()) }

// NewAt is New with the time part taken from t.
func NewAt(prefix string, t time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(t.UnixMilli())<<16)
	_, _ = rand.Read(b[6:]) // crypto/rand.Read never fails (Go 1.24+)
	return encode(prefix, b)
}

// Example is a well-formed id for documentation examples (the OpenAPI
// webhook examples): made at a fixed instant with n as its random part, so
// it is the same on every build and Example(p, n) names the same record
// wherever an example refers to it.
func Example(prefix string, n uint64) string {
	var b [16]byte
	at := time.Date(2026, 3, 14, 13, 5, 9, 0, time.UTC)
	binary.BigEndian.PutUint64(b[:8], uint64(at.UnixMilli())<<16)
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/%d", prefix, n)) // random-looking bits from prefix and n
	copy(b[6:], sum[:])
	return encode(prefix, b)
}

// encode renders prefix + "_" + b as 26 base32 digits.
func encode(prefix string, b [16]byte) string {
	out := make([]byte, 0, len(prefix)+27)
	out = append(out, prefix...)
	out = append(out, '_')
	// 128 bits → 26 base32 digits, most significant first.
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	var digits [26]byte
	for i := 25; i >= 0; i-- {
		digits[i] = alphabet[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(append(out, digits[:]...))
}

// Valid reports whether s looks like an id of the given prefix; handlers use
// it to answer 404 without a query for ids that cannot exist.
func Valid(prefix, s string) bool {
	if len(s) != len(prefix)+27 || s[:len(prefix)] != prefix || s[len(prefix)] != '_' {
		return false
	}
	for i := len(prefix) + 1; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// Pattern is the regular expression of the strings Valid takes for prefix,
// as the OpenAPI document states an id filter (issue 26 item 6).
func Pattern(prefix string) string { return "^" + prefix + "_[0-9a-z]{26}$" }

// Time returns the creation time an id carries (to the millisecond), and
// false for a string that is not an id of this package.
func Time(id string) (time.Time, bool) {
	i := len(id) - 26
	if i < 2 || id[i-1] != '_' {
		return time.Time{}, false
	}
	// The first 10 digits are the top 50 bits of the 130 the digits hold:
	// two zero bits, then the 48 bits of milliseconds.
	var ms uint64
	for _, c := range []byte(id[i : i+10]) {
		d := strings.IndexByte(alphabet, c)
		if d < 0 {
			return time.Time{}, false
		}
		ms = ms<<5 | uint64(d)
	}
	if ms>>48 != 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(ms)), true
}
