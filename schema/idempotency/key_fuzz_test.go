package idempotency_test

import (
	"testing"

	"oficina/schema/idempotency"
)

// FuzzValidKey: the Idempotency-Key parser accepts exactly 1 to MaxKeyLen
// printable ASCII characters (docs/api.md), so a stored key is always text
// the database, a header and a log line can hold (no NUL, no control
// character, no byte above 0x7e).
func FuzzValidKey(f *testing.F) {
	for _, s := range []string{"k", "8f14e45f-ceea-467f-a0e8-1c3b2a1f4d7e", "", " ", "a b", "a\tb", "a\x00b", "a\x7fb",
		"chave-é", "\xff", string(make([]byte, idempotency.MaxKeyLen)), "order:1/2?x=y#z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, k string) {
		err := idempotency.ValidKey(k)
		printable := len(k) >= 1 && len(k) <= idempotency.MaxKeyLen
		for i := 0; i < len(k) && printable; i++ {
			printable = k[i] >= 0x20 && k[i] <= 0x7e
		}
		if (err == nil) != printable {
			t.Fatalf("%q: ValidKey %v, printable ASCII of 1..%d: %v", k, err, idempotency.MaxKeyLen, printable)
		}
	})
}
