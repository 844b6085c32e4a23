package ids

import (
	"regexp"
	"strings"
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

// Issue 26 item 6: Pattern takes exactly what Valid takes.
func TestThePatternIsValid(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(Pattern("cli"))
	for _, s := range []string{New("cli"), New("mem"), "cli_" + strings.Repeat("z", 26), "cli_" + strings.Repeat("Z", 26),
		"cli_" + strings.Repeat("a", 25), "cli_" + strings.Repeat("a", 27), "cli-" + strings.Repeat("a", 26), "cli", "",
		"xcli_" + strings.Repeat("a", 26), "cli_" + strings.Repeat("é", 13)} {
		if re.MatchString(s) != Valid("cli", s) {
			t.Errorf("%q: pattern %v, Valid %v", s, re.MatchString(s), Valid("cli", s))
		}
	}
}
