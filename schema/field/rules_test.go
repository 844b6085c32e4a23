package field

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// Issue 26 item 6: NonBlankPattern takes a string exactly when
// strings.TrimSpace leaves something of it and it holds no NUL, for every
// character alone and beside a letter; TextPattern refuses NUL only.
func TestTheTextPatternsAreTrimSpaceAndTheNULRule(t *testing.T) {
	t.Parallel()
	nonBlank, text := regexp.MustCompile(NonBlankPattern), regexp.MustCompile(TextPattern)
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		for _, s := range []string{string(r), " " + string(r) + "\t", "a" + string(r)} {
			want := strings.TrimSpace(s) != "" && !strings.ContainsRune(s, 0)
			if nonBlank.MatchString(s) != want {
				t.Errorf("NonBlankPattern on %q: %v, want %v", s, !want, want)
			}
			if text.MatchString(s) != !strings.ContainsRune(s, 0) {
				t.Errorf("TextPattern on %q: %v", s, text.MatchString(s))
			}
		}
	}
	for _, s := range []string{"", " \t\u3000\u2028"} {
		if nonBlank.MatchString(s) {
			t.Errorf("NonBlankPattern takes %q", s)
		}
	}
}
