package testkit

import (
	"crypto/rand"
	"testing"

	"oficina/schema/secretbox"
)

// SecretKeys is the key ring (OFICINA_SECRET_KEYS) of every test: one
// fixed, public key, so test processes sharing the test database open each
// other's sealed webhook secrets. Never use it outside tests.
const SecretKeys = "test:+8byEbbmxPZWXOJY54pmU/pZIZsiFIqVMXgUEFCt3/U="

// Keyring is SecretKeys parsed.
func Keyring(t testing.TB) *secretbox.Keyring {
	t.Helper()
	r, err := secretbox.ParseKeyring(SecretKeys)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// NewKeyring is a ring of a fresh random key named id followed by the
// keys of the ring text rest ("" for none): a rotation's new ring.
func NewKeyring(t testing.TB, id, rest string) (*secretbox.Keyring, string) {
	t.Helper()
	text := NewKeyEntry(t, id)
	if rest != "" {
		text += "," + rest
	}
	r, err := secretbox.ParseKeyring(text)
	if err != nil {
		t.Fatal(err)
	}
	return r, text
}

// NewKeyEntry is "id:<fresh random key>", an entry of OFICINA_SECRET_KEYS.
func NewKeyEntry(t testing.TB, id string) string {
	t.Helper()
	k, err := secretbox.NewKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return id + ":" + k
}
