package signing

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
)

const (
	// SecretPrefix starts every endpoint secret (spec 2.8, 6.2).
	SecretPrefix = "whsec_"
	// KeySize is the number of random bytes behind a secret: the HMAC-SHA256
	// block size would allow more, but 32 bytes matches the hash output and is
	// what the Standard Webhooks libraries generate.
	KeySize = 32
)

// Errors returned by ParseSecret, wrapped so callers can tell them apart with errors.Is.
var (
	ErrSecretPrefix   = errors.New("signing: secret does not start with " + SecretPrefix)
	ErrSecretEncoding = errors.New("signing: secret is not valid base64")
	ErrSecretLength   = errors.New("signing: secret key has the wrong length")
)

// NewSecret reads KeySize bytes from r and returns them as a secret. r is a
// parameter so production passes crypto/rand.Reader and tests pass a fixed
// reader.
func NewSecret(r io.Reader) (string, error) {
	key := make([]byte, KeySize)
	if _, err := io.ReadFull(r, key); err != nil {
		return "", fmt.Errorf("signing: read random key: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// ParseSecret validates a secret and returns its HMAC key. It is strict
// (prefix, padded standard base64, exactly KeySize bytes) because every secret
// we hold was made by NewSecret; anything else is corruption, and signing with
// it would produce deliveries no receiver can verify.
func ParseSecret(s string) ([]byte, error) {
	enc, ok := strings.CutPrefix(s, SecretPrefix)
	if !ok {
		return nil, ErrSecretPrefix
	}
	key, err := base64.StdEncoding.Strict().DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSecretEncoding, err)
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("%w: got %d bytes, want %d", ErrSecretLength, len(key), KeySize)
	}
	return key, nil
}
