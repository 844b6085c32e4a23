package secretbox_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"oficina/schema/secretbox"
)

func newKey(t *testing.T) string {
	t.Helper()
	k, err := secretbox.NewKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func ring(t *testing.T, entries ...string) *secretbox.Keyring {
	t.Helper()
	r, err := secretbox.ParseKeyring(strings.Join(entries, ","))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var (
	rowA     = secretbox.Bind("webhook_endpoints.sealed_secret", "co_a", "we_1")
	plainTxt = []byte("whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
)

// The associated data binds a value to its row: the same bytes under
// another row, column or company do not open, and parts cannot be
// re-split to collide.
func TestSealedValueMovedToAnotherRowDoesNotOpen(t *testing.T) {
	t.Parallel()
	r := ring(t, "k1:"+newKey(t))
	id, sealed, err := r.Seal(plainTxt, rowA)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.Open(id, sealed, rowA); err != nil || !bytes.Equal(got, plainTxt) {
		t.Fatalf("own row: %q, %v", got, err)
	}
	for name, ad := range map[string][]byte{
		"another endpoint": secretbox.Bind("webhook_endpoints.sealed_secret", "co_a", "we_2"),
		"another company":  secretbox.Bind("webhook_endpoints.sealed_secret", "co_b", "we_1"),
		"another column":   secretbox.Bind("webhook_endpoints.sealed_previous_secret", "co_a", "we_1"),
		"parts re-split":   secretbox.Bind("webhook_endpoints.sealed_secret", "co_aw", "e_1"),
		"no binding":       nil,
	} {
		if got, err := r.Open(id, sealed, ad); !errors.Is(err, secretbox.ErrOpen) || got != nil {
			t.Errorf("%s: %q, %v; want ErrOpen", name, got, err)
		}
	}
}

// A key id the ring lacks is an error naming the id, never a panic or the
// stored bytes taken as they are.
func TestUnknownKeyIDIsAnError(t *testing.T) {
	t.Parallel()
	old := ring(t, "old:"+newKey(t))
	id, sealed, err := old.Seal(plainTxt, rowA)
	if err != nil {
		t.Fatal(err)
	}
	r := ring(t, "new:"+newKey(t))
	for _, keyID := range []string{id, "", "NEW"} {
		got, err := r.Open(keyID, sealed, rowA)
		if !errors.Is(err, secretbox.ErrUnknownKey) || got != nil {
			t.Errorf("key %q: %q, %v; want ErrUnknownKey", keyID, got, err)
		}
	}
	// The same id holding another key fails authentication.
	other := ring(t, "old:"+newKey(t))
	if _, err := other.Open(id, sealed, rowA); !errors.Is(err, secretbox.ErrOpen) {
		t.Errorf("another key under the id: %v, want ErrOpen", err)
	}
}

// Rotation: a ring of two keys opens values of both and seals with the
// first.
func TestKeyringOfTwoKeysOpensBothAndSealsWithTheFirst(t *testing.T) {
	t.Parallel()
	k1, k2 := newKey(t), newKey(t)
	_, underOld, err := ring(t, "k1:"+k1).Seal(plainTxt, rowA)
	if err != nil {
		t.Fatal(err)
	}
	r := ring(t, "k2:"+k2, "k1:"+k1)
	if r.Primary() != "k2" || fmt.Sprint(r.IDs()) != "[k2 k1]" {
		t.Fatalf("primary %q, ids %v", r.Primary(), r.IDs())
	}
	id, underNew, err := r.Seal(plainTxt, rowA)
	if err != nil || id != "k2" {
		t.Fatalf("sealed under %q (%v), want k2", id, err)
	}
	for keyID, sealed := range map[string][]byte{"k1": underOld, "k2": underNew} {
		if got, err := r.Open(keyID, sealed, rowA); err != nil || !bytes.Equal(got, plainTxt) {
			t.Errorf("%s: %q, %v", keyID, got, err)
		}
	}
	if _, err := ring(t, "k1:"+k1).Open("k1", underNew, rowA); !errors.Is(err, secretbox.ErrOpen) {
		t.Errorf("the new value under the old key: %v, want ErrOpen", err)
	}
}

// Format: version byte, 96-bit random nonce (two seals of one plaintext
// differ), ciphertext with tag; a changed byte anywhere (the version
// included) or a truncated value does not open.
func TestSealedFormatVersionNonceAndTamper(t *testing.T) {
	t.Parallel()
	r := ring(t, "k1:"+newKey(t))
	_, a, _ := r.Seal(plainTxt, rowA)
	_, b, _ := r.Seal(plainTxt, rowA)
	if a[0] != secretbox.Version1 || len(a) != 1+12+len(plainTxt)+16 {
		t.Fatalf("format: version %#x, %d bytes", a[0], len(a))
	}
	if bytes.Equal(a[1:13], b[1:13]) || bytes.Equal(a, b) {
		t.Error("two seals share a nonce")
	}
	if bytes.Contains(a, plainTxt) || bytes.Contains(a, plainTxt[6:]) {
		t.Error("the plaintext shows in the sealed value")
	}
	for i := range a {
		c := bytes.Clone(a)
		c[i] ^= 0x01
		if _, err := r.Open("k1", c, rowA); err == nil {
			t.Fatalf("byte %d flipped: opened", i)
		} else if i == 0 && !errors.Is(err, secretbox.ErrFormat) {
			t.Errorf("version flipped: %v, want ErrFormat", err)
		}
	}
	for _, n := range []int{0, 1, 13, 28} {
		if _, err := r.Open("k1", a[:n], rowA); !errors.Is(err, secretbox.ErrFormat) {
			t.Errorf("%d bytes: %v, want ErrFormat", n, err)
		}
	}
}

// OFICINA_SECRET_KEYS: id:base64 entries of 32 bytes; a mistake is named
// without echoing any key material, and so is a printed ring.
func TestParseKeyringRefusesWithoutShowingKeys(t *testing.T) {
	t.Parallel()
	good := newKey(t)
	short := base64.StdEncoding.EncodeToString(make([]byte, 16))
	for name, tc := range map[string]struct {
		text string
		want error
	}{
		"empty":          {"", secretbox.ErrNoKeys},
		"blank entries":  {" , ", secretbox.ErrNoKeys},
		"bare key":       {good, secretbox.ErrKeyring},
		"bad id":         {"a b:" + good, secretbox.ErrKeyring},
		"short key":      {"k1:" + short, secretbox.ErrKeyring},
		"not base64":     {"k1:" + strings.Repeat("*", 44), secretbox.ErrKeyring},
		"unpadded":       {"k1:" + strings.TrimRight(good, "="), secretbox.ErrKeyring},
		"duplicate id":   {"k1:" + good + ",k1:" + newKey(t), secretbox.ErrKeyring},
		"one good entry": {" k1 : " + good + " ,", nil},
	} {
		r, err := secretbox.ParseKeyring(tc.text)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), good) || strings.Contains(err.Error(), short)) {
			t.Errorf("%s: error shows the key: %v", name, err)
		}
		if r != nil && (strings.Contains(fmt.Sprintf("%v %+v %#v %s", r, r, r, r), good)) {
			t.Errorf("%s: printed ring shows the key", name)
		}
	}
}
