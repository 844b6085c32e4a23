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

// Example ids are valid ids, the same on every call, distinct per n.
func TestExampleIDsAreValidAndStable(t *testing.T) {
	t.Parallel()
	a, b := Example("cli", 1), Example("cli", 2)
	if !Valid("cli", a) || !Valid("cli", b) || a == b || a != Example("cli", 1) {
		t.Fatalf("Example: %s %s", a, b)
	}
}
