package tenant

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"hash/crc32"
	"strings"
)

// Key secrets look like ofk_<32 base62><6 base62 CRC32>: the fixed prefix lets
// secret scanners find leaked keys, and the checksum lets them (and us)
// reject typos and random strings without a database lookup.
const (
	keyPrefix     = "ofk_"
	keyRandomLen  = 32
	keyChecksumLn = 6
	keyLen        = len(keyPrefix) + keyRandomLen + keyChecksumLn
	base62        = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// ErrMalformedKey is a token that cannot be one of our keys.
var ErrMalformedKey = errors.New("tenant: malformed API key")

// NewKeySecret returns a new key secret.
func NewKeySecret() string {
	var raw [keyRandomLen]byte
	_, _ = rand.Read(raw[:]) // never fails since Go 1.24
	b := make([]byte, 0, keyLen)
	b = append(b, keyPrefix...)
	for _, r := range raw {
		b = append(b, base62[int(r)%len(base62)])
	}
	return string(appendChecksum(b, b[len(keyPrefix):]))
}

func appendChecksum(dst, body []byte) []byte {
	sum := crc32.ChecksumIEEE(body)
	var c [keyChecksumLn]byte
	for i := keyChecksumLn - 1; i >= 0; i-- {
		c[i] = base62[sum%62]
		sum /= 62
	}
	return append(dst, c[:]...)
}

// CheckKeyFormat validates prefix, length, alphabet and checksum.
func CheckKeyFormat(s string) error {
	if len(s) != keyLen || !strings.HasPrefix(s, keyPrefix) {
		return ErrMalformedKey
	}
	for i := len(keyPrefix); i < len(s); i++ {
		if strings.IndexByte(base62, s[i]) < 0 {
			return ErrMalformedKey
		}
	}
	body := []byte(s[len(keyPrefix) : len(s)-keyChecksumLn])
	if string(appendChecksum(nil, body)) != s[len(s)-keyChecksumLn:] {
		return ErrMalformedKey
	}
	return nil
}

// HashKey is what is stored and looked up.
func HashKey(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// DisplayPrefix is the part of a key shown in lists to recognise it.
func DisplayPrefix(secret string) string { return secret[:len(keyPrefix)+8] }

// BearerToken extracts the token of an Authorization header value. The
// scheme is case-insensitive (RFC 7235); anything else is malformed.
func BearerToken(header string) (string, error) {
	scheme, tok, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", ErrMalformedKey
	}
	tok = strings.TrimLeft(tok, " ")
	if tok == "" || strings.ContainsAny(tok, " \t") {
		return "", ErrMalformedKey
	}
	return tok, nil
}
