package tenant

import (
	"strings"
	"testing"
)

func TestKeysCarryPrefixAndChecksum(t *testing.T) {
	t.Parallel()
	k := NewKeySecret()
	if !strings.HasPrefix(k, "ofk_") || len(k) != keyLen {
		t.Fatalf("key %q", k)
	}
	if err := CheckKeyFormat(k); err != nil {
		t.Fatal(err)
	}
	// One changed character breaks the checksum.
	b := []byte(k)
	b[10] ^= 1
	if b[10] >= 'a' && b[10] <= 'z' || b[10] >= 'A' && b[10] <= 'Z' || b[10] >= '0' && b[10] <= '9' {
		if err := CheckKeyFormat(string(b)); err == nil {
			t.Fatal("typo accepted")
		}
	}
	for _, bad := range []string{"", "ofk_", "sk_live_123", k + "x", strings.ToUpper(k[:4]) + k[4:], k[:len(k)-1] + "!"} {
		if CheckKeyFormat(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestBearerTokenParsing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		h, tok string
		ok     bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer abc", "abc", true},
		{"Bearer   abc", "abc", true},
		{"Basic abc", "", false},
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"Bearer a b", "", false},
		{"", "", false},
		{"abc", "", false},
	} {
		tok, err := BearerToken(tc.h)
		if (err == nil) != tc.ok || tok != tc.tok {
			t.Errorf("BearerToken(%q) = %q, %v", tc.h, tok, err)
		}
	}
}

func FuzzAuthorizationHeader(f *testing.F) {
	f.Add("Bearer " + NewKeySecret())
	f.Add("Bearer ofk_0000")
	f.Add("bearer\t x")
	f.Fuzz(func(t *testing.T, h string) {
		tok, err := BearerToken(h)
		if err != nil {
			return
		}
		if tok == "" || strings.ContainsAny(tok, " \t") {
			t.Fatalf("token %q from %q", tok, h)
		}
		if CheckKeyFormat(tok) == nil && (len(tok) != keyLen || !strings.HasPrefix(tok, keyPrefix)) {
			t.Fatalf("format accepted %q", tok)
		}
	})
}
