package signing

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

const (
	testEventID = "evt_0123456789abcdef0123456789abcdef"
	testBody    = `{"id":"evt_0123456789abcdef0123456789abcdef","type":"ping"}`
	// Secrets of seq(0, 32) and seq(32, 32).
	testSecretA = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	testSecretB = "whsec_ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8="
)

// fixedClock stands in for the dispatcher's injected clock. The sub-second
// part checks that webhook-timestamp and the signature use whole seconds.
func fixedClock() time.Time { return time.Unix(1700000000, 999_000_000).UTC() }

// Known-answer vectors. The expected values were computed outside Go (Python
// hmac/hashlib), so a bug shared by our code and Go's test helpers cannot hide.
func TestSign_KnownAnswerVectors(t *testing.T) {
	t.Parallel()
	spec, err := base64.StdEncoding.DecodeString("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		keys [][]byte
		id   string
		ts   time.Time
		body string
		want string
	}{
		{
			// The example published in the Standard Webhooks specification. Its
			// key is 24 bytes, so it is decoded here rather than through
			// ParseSecret, which only accepts our 32-byte secrets.
			name: "standard webhooks spec example",
			keys: [][]byte{spec},
			id:   "msg_p5jXN8AQM9LWM0D4loKWxJek",
			ts:   time.Unix(1614265330, 0),
			body: `{"test": 2432232314}`,
			want: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
		},
		{
			name: "oficina secret, sub-second clock truncated to seconds",
			keys: [][]byte{mustParse(t, testSecretA)},
			id:   testEventID,
			ts:   fixedClock(),
			body: testBody,
			want: "v1,CByIt9yD5VObiGek+vPCtu5DrbvvrWz33AJwtkkiWHI=",
		},
		{
			name: "empty body",
			keys: [][]byte{mustParse(t, testSecretA)},
			id:   testEventID,
			ts:   fixedClock(),
			body: "",
			want: "v1,f19xMaG3hvHbTdd/i++ryRp9yr/wZbEONW9YtXBsjtk=",
		},
		{
			name: "rotation overlap signs with both keys in order",
			keys: [][]byte{mustParse(t, testSecretA), mustParse(t, testSecretB)},
			id:   testEventID,
			ts:   fixedClock(),
			body: testBody,
			want: "v1,CByIt9yD5VObiGek+vPCtu5DrbvvrWz33AJwtkkiWHI= v1,8rCimNmgWbK6jbogckQnkMc2SRV3PkrVbxniYm7i0JE=",
		},
		{
			name: "no keys gives no signature",
			keys: nil,
			id:   testEventID,
			ts:   fixedClock(),
			body: testBody,
			want: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Sign(tt.keys, tt.id, tt.ts, []byte(tt.body)); got != tt.want {
				t.Fatalf("Sign = %q\nwant   %q", got, tt.want)
			}
		})
	}
}

// Spec 6.2: the header set of a delivery.
func TestHeaders_DeliveryHeaderSet(t *testing.T) {
	t.Parallel()
	h, err := Headers([][]byte{mustParse(t, testSecretA)}, testEventID, fixedClock(), []byte(testBody))
	if err != nil {
		t.Fatalf("Headers: %v", err)
	}
	want := map[string]string{
		"webhook-id":        testEventID,
		"webhook-timestamp": "1700000000",
		"webhook-signature": "v1,CByIt9yD5VObiGek+vPCtu5DrbvvrWz33AJwtkkiWHI=",
		"content-type":      "application/json",
		"user-agent":        "Oficina-Webhooks/1.0",
	}
	if len(h) != len(want) {
		t.Errorf("got %d headers, want %d: %v", len(h), len(want), h)
	}
	for k, v := range want {
		if got := h.Values(k); len(got) != 1 || got[0] != v {
			t.Errorf("%s = %q, want [%q]", k, got, v)
		}
	}
}

// Spec 6.2: webhook-timestamp is the time of this attempt and changes per
// attempt, so the signature changes too while webhook-id stays.
func TestHeaders_TimestampFollowsAttempt(t *testing.T) {
	t.Parallel()
	keys := [][]byte{mustParse(t, testSecretA)}
	first, err := Headers(keys, testEventID, fixedClock(), []byte(testBody))
	if err != nil {
		t.Fatal(err)
	}
	retry, err := Headers(keys, testEventID, fixedClock().Add(90*time.Second), []byte(testBody))
	if err != nil {
		t.Fatal(err)
	}
	if got := retry.Get(HeaderTimestamp); got != "1700000090" {
		t.Errorf("retry timestamp = %s, want 1700000090", got)
	}
	if first.Get(HeaderSignature) == retry.Get(HeaderSignature) {
		t.Error("signature did not change with the attempt time")
	}
	if first.Get(HeaderID) != retry.Get(HeaderID) {
		t.Error("webhook-id changed between attempts")
	}
}

func TestHeaders_RefusesToSendUnsigned(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		keys [][]byte
		id   string
	}{
		{"no keys", nil, testEventID},
		{"empty key", [][]byte{mustParse(t, testSecretA), {}}, testEventID},
		{"empty id", [][]byte{mustParse(t, testSecretA)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if h, err := Headers(tt.keys, tt.id, fixedClock(), []byte(testBody)); err == nil {
				t.Fatalf("Headers = %v, want error", h)
			}
		})
	}
	if _, err := Headers(nil, testEventID, fixedClock(), nil); !errors.Is(err, ErrNoKeys) {
		t.Fatalf("err = %v, want ErrNoKeys", err)
	}
}

// Our deliveries verify with the official Standard Webhooks library, which a
// receiver would use. Verify checks a 5-minute tolerance against the real
// clock, so these sign at time.Now rather than the fixed clock.
func TestOfficialLibraryVerifiesOurSignature(t *testing.T) {
	t.Parallel()
	now := time.Now()
	tests := []struct {
		name    string
		sign    []string // secrets that sign
		receive string   // secret the receiver holds
		ok      bool
	}{
		{"single secret", []string{testSecretA}, testSecretA, true},
		{"rotation: receiver still on old secret", []string{testSecretA, testSecretB}, testSecretA, true},
		{"rotation: receiver already on new secret", []string{testSecretA, testSecretB}, testSecretB, true},
		{"receiver holds a secret that did not sign", []string{testSecretA}, testSecretB, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			keys := make([][]byte, len(tt.sign))
			for i, s := range tt.sign {
				keys[i] = mustParse(t, s)
			}
			h, err := Headers(keys, testEventID, now, []byte(testBody))
			if err != nil {
				t.Fatal(err)
			}
			err = verifier(t, tt.receive).Verify([]byte(testBody), h)
			if tt.ok && err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if !tt.ok && !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
				t.Fatalf("Verify err = %v, want ErrNoMatchingSignature", err)
			}
		})
	}
}

// The spec example, checked with the library too (ignoring its age, since the
// timestamp is from 2021).
func TestOfficialLibraryVerifiesSpecExample(t *testing.T) {
	t.Parallel()
	key, err := base64.StdEncoding.DecodeString("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"test": 2432232314}`)
	h, err := Headers([][]byte{key}, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), body)
	if err != nil {
		t.Fatal(err)
	}
	if err := verifier(t, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").VerifyIgnoringTimestamp(body, h); err != nil {
		t.Fatalf("VerifyIgnoringTimestamp: %v", err)
	}
}

// A receiver must reject a delivery whose body, id or timestamp was changed
// after signing; each is part of the signed content.
func TestOfficialLibraryRejectsTampering(t *testing.T) {
	t.Parallel()
	now := time.Now()
	body := []byte(testBody)
	tests := []struct {
		name   string
		tamper func(h http.Header, body []byte) []byte
	}{
		{"body changed", func(http.Header, []byte) []byte {
			return []byte(`{"id":"evt_0123456789abcdef0123456789abcdef","type":"pong"}`)
		}},
		{"body extended", func(_ http.Header, b []byte) []byte { return append(b, ' ') }},
		{"id changed", func(h http.Header, b []byte) []byte {
			h.Set(HeaderID, "evt_ffffffffffffffffffffffffffffffff")
			return b
		}},
		{"timestamp changed within tolerance", func(h http.Header, b []byte) []byte {
			h.Set(HeaderTimestamp, strconv.FormatInt(now.Unix()+1, 10))
			return b
		}},
		{"signature from another key", func(h http.Header, b []byte) []byte {
			h.Set(HeaderSignature, Sign([][]byte{mustParse(t, testSecretB)}, testEventID, now, b))
			return b
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := Headers([][]byte{mustParse(t, testSecretA)}, testEventID, now, body)
			if err != nil {
				t.Fatal(err)
			}
			// Sanity: untampered, it verifies.
			if err := verifier(t, testSecretA).Verify(body, h); err != nil {
				t.Fatalf("untampered Verify: %v", err)
			}
			got := tt.tamper(h, append([]byte(nil), body...))
			err = verifier(t, testSecretA).Verify(got, h)
			if !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
				t.Fatalf("Verify err = %v, want ErrNoMatchingSignature", err)
			}
		})
	}
}

func verifier(t *testing.T, secret string) *standardwebhooks.Webhook {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("NewWebhook: %v", err)
	}
	return wh
}

func mustParse(t *testing.T, secret string) []byte {
	t.Helper()
	key, err := ParseSecret(secret)
	if err != nil {
		t.Fatalf("ParseSecret(%q): %v", secret, err)
	}
	return key
}
