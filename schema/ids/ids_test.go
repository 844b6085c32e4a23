package ids

import (
	"testing"
	"time"
)

func TestIDsSortByCreationAndAreSubjectSafe(t *testing.T) {
	t.Parallel()
	a := NewAt("so", time.UnixMilli(1_000))
	b := NewAt("so", time.UnixMilli(2_000))
	if !(a < b) {
		t.Fatalf("%s !< %s", a, b)
	}
	if !Valid("so", a) || Valid("co", a) || Valid("so", a+"x") || Valid("so", "so_ABC") {
		t.Fatal("Valid disagrees")
	}
	seen := map[string]bool{}
	for i := 0; i < 10000; i++ {
		id := New("co")
		if seen[id] {
			t.Fatal("duplicate id")
		}
		seen[id] = true
	}
}

func TestAnIDTellsWhenItWasMade(t *testing.T) {
	t.Parallel()
	at := time.UnixMilli(1_795_000_123_456)
	for _, tc := range []struct {
		id   string
		want time.Time
		ok   bool
	}{
		{NewAt("whd", at), at, true},
		{NewAt("co", time.UnixMilli(0)), time.UnixMilli(0), true},
		{"whd_short", time.Time{}, false},
		{"whd_" + "ZZZZZZZZZZZZZZZZZZZZZZZZZZ", time.Time{}, false}, // not the alphabet
		{"whd_" + "zzzzzzzzzzzzzzzzzzzzzzzzzz", time.Time{}, false}, // more than 48 bits
		{"_0000000000000000000000000", time.Time{}, false},
	} {
		got, ok := Time(tc.id)
		if ok != tc.ok || !got.Equal(tc.want) {
			t.Errorf("Time(%q) = %v %v, want %v %v", tc.id, got, ok, tc.want, tc.ok)
		}
	}
}

// Example ids are valid ids, the same on every call, distinct per n.
func TestExampleIDsAreValidAndStable(t *testing.T) {
	t.Parallel()
	a, b := Example("cli", 1), Example("cli", 2)
	if !Valid("cli", a) || !Valid("cli", b) || a == b || a != Example("cli", 1) {
		t.Fatalf("Example: %s %s", a, b)
	}
}
