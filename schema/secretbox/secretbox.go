// Package secretbox seals small secrets for storage — the webhook signing
// secrets — with AES-256-GCM from the standard library under a key ring.
//
// It sits in the schema kernel because both the records that write the
// secrets (schema/webhooks) and the worker that signs with them (dispatch)
// need it, and the kernel is importable by every floor; it imports nothing
// of Oficina, so wherever signing moves it stays below both.
//
// A ring lists keys by id. The first seals; every one opens. The key id is
// stored beside each sealed value, so keys rotate without downtime: put a
// new key first, restart, re-seal every row (oficina admin secrets rekey),
// then drop the old key.
//
// The caller passes associated data naming where the value is stored
// (Bind: table and column, company, row): GCM authenticates it, so a value
// copied to another row, column or company does not open.
//
// A sealed value is: version (1 byte, 0x01) ‖ nonce (12 random bytes) ‖
// ciphertext with its 16-byte tag. The version byte is authenticated too,
// so the format can evolve without a stored value being read as another
// version. Errors and String never carry a key or a plaintext.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

const (
	// KeySize is the length of a ring key: AES-256.
	KeySize = 32
	// Version1 is the first byte of a value sealed by this package.
	Version1 byte = 0x01

	nonceSize = 12 // GCM's standard 96-bit nonce, random per value
	tagSize   = 16
	maxIDLen  = 32
)

// Errors, told apart with errors.Is; none carries secret material.
var (
	// ErrNoKeys: the ring is empty (the setting is unset).
	ErrNoKeys = errors.New("secretbox: no keys")
	// ErrKeyring: the ring's text is malformed.
	ErrKeyring = errors.New("secretbox: malformed key ring")
	// ErrUnknownKey: the value was sealed under a key the ring lacks.
	ErrUnknownKey = errors.New("secretbox: unknown key id")
	// ErrFormat: the value is not one this package sealed (too short, or
	// an unknown version).
	ErrFormat = errors.New("secretbox: malformed sealed value")
	// ErrOpen: authentication failed — another key under the same id,
	// another row's value, or tampering.
	ErrOpen = errors.New("secretbox: sealed value does not open here")
)

// Key is one key of a ring.
type Key struct {
	ID     string // letters, digits, '.', '_', '-'; at most 32
	Secret []byte // KeySize bytes
}

// Keyring seals under its first key and opens under any of them. It is
// safe for concurrent use.
type Keyring struct {
	ids   []string
	aeads map[string]cipher.AEAD
}

// NewKeyring builds a ring from keys, the first sealing.
func NewKeyring(keys ...Key) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, ErrNoKeys
	}
	r := &Keyring{aeads: make(map[string]cipher.AEAD, len(keys))}
	for i, k := range keys {
		if !validID(k.ID) {
			return nil, fmt.Errorf("%w: key %d: the id must be 1 to %d letters, digits, '.', '_' or '-'", ErrKeyring, i+1, maxIDLen)
		}
		if _, dup := r.aeads[k.ID]; dup {
			return nil, fmt.Errorf("%w: key id %q appears twice", ErrKeyring, k.ID)
		}
		if len(k.Secret) != KeySize {
			return nil, fmt.Errorf("%w: key %q: %d bytes, want %d", ErrKeyring, k.ID, len(k.Secret), KeySize)
		}
		block, err := aes.NewCipher(k.Secret)
		if err != nil {
			return nil, fmt.Errorf("%w: key %q: %w", ErrKeyring, k.ID, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("%w: key %q: %w", ErrKeyring, k.ID, err)
		}
		r.ids = append(r.ids, k.ID)
		r.aeads[k.ID] = aead
	}
	return r, nil
}

// ParseKeyring reads "id:base64key,id:base64key,…" (standard base64 of
// KeySize bytes, as `openssl rand -base64 32` prints; spaces around entries
// are ignored). An empty text is ErrNoKeys.
func ParseKeyring(text string) (*Keyring, error) {
	var keys []Key
	for i, entry := range strings.Split(text, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		id, enc, ok := strings.Cut(entry, ":")
		id, enc = strings.TrimSpace(id), strings.TrimSpace(enc)
		if !ok || !validID(id) {
			// The entry is not echoed: it may be a bare key.
			return nil, fmt.Errorf("%w: entry %d is not id:base64key (id: 1 to %d letters, digits, '.', '_' or '-')", ErrKeyring, i+1, maxIDLen)
		}
		secret, err := base64.StdEncoding.Strict().DecodeString(enc)
		if err != nil || len(secret) != KeySize {
			return nil, fmt.Errorf("%w: key %q is not the standard base64 of %d bytes", ErrKeyring, id, KeySize)
		}
		keys = append(keys, Key{ID: id, Secret: secret})
	}
	return NewKeyring(keys...)
}

// NewKey returns a fresh key as standard base64 (what a ring entry holds
// after its id), read from r (crypto/rand.Reader in production).
func NewKey(r io.Reader) (string, error) {
	var b [KeySize]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", fmt.Errorf("secretbox: read random key: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b[:]), nil
}

func validID(id string) bool {
	if id == "" || len(id) > maxIDLen {
		return false
	}
	for _, c := range []byte(id) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// Primary is the id of the key that seals.
func (r *Keyring) Primary() string { return r.ids[0] }

// IDs are the ring's key ids in order, the primary first.
func (r *Keyring) IDs() []string { return append([]string(nil), r.ids...) }

// Has reports whether the ring holds a key with this id.
func (r *Keyring) Has(id string) bool { _, ok := r.aeads[id]; return ok }

// String names the keys only, so a ring printed by mistake shows no key.
func (r *Keyring) String() string { return "secretbox.Keyring[" + strings.Join(r.ids, ",") + "]" }

// GoString is String, for %#v.
func (r *Keyring) GoString() string { return r.String() }

// Seal encrypts plaintext under the primary key, bound to ad, and returns
// that key's id with the sealed value.
func (r *Keyring) Seal(plaintext, ad []byte) (keyID string, sealed []byte, err error) {
	id := r.ids[0]
	aead := r.aeads[id]
	out := make([]byte, 1+nonceSize, 1+nonceSize+len(plaintext)+tagSize)
	out[0] = Version1
	if _, err := rand.Read(out[1:]); err != nil {
		return "", nil, fmt.Errorf("secretbox: read nonce: %w", err)
	}
	return id, aead.Seal(out, out[1:], plaintext, withVersion(Version1, ad)), nil
}

// Open decrypts a value sealed under keyID with the same ad. A key the ring
// lacks is ErrUnknownKey; a value that fails authentication (another row's,
// tampered, another key under this id) is ErrOpen. GCM checks the tag in
// constant time; nothing else here depends on secret data.
func (r *Keyring) Open(keyID string, sealed, ad []byte) ([]byte, error) {
	aead, ok := r.aeads[keyID]
	if !ok {
		return nil, fmt.Errorf("%w %q (the ring has %s)", ErrUnknownKey, keyID, strings.Join(r.ids, ", "))
	}
	if len(sealed) < 1+nonceSize+tagSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrFormat, len(sealed))
	}
	if sealed[0] != Version1 {
		return nil, fmt.Errorf("%w: version %d", ErrFormat, sealed[0])
	}
	nonce, ct := sealed[1:1+nonceSize], sealed[1+nonceSize:]
	pt, err := aead.Open(nil, nonce, ct, withVersion(sealed[0], ad))
	if err != nil {
		return nil, fmt.Errorf("%w (key %q)", ErrOpen, keyID)
	}
	return pt, nil
}

func withVersion(v byte, ad []byte) []byte {
	out := make([]byte, 0, 1+len(ad))
	return append(append(out, v), ad...)
}

// Bind builds associated data from parts (for example a label naming the
// table and column, the company id, the row id). Each part is
// length-prefixed, so no two lists of parts give the same bytes.
func Bind(parts ...string) []byte {
	n := 0
	for _, p := range parts {
		n += 4 + len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = binary.BigEndian.AppendUint32(out, uint32(len(p)))
		out = append(out, p...)
	}
	return out
}
