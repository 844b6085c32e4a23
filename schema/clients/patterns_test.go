package clients

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// accepted is what setEmail and setPhone take: blank (absent) or a value
// their parser takes, within its length.
func acceptedEmail(s string) bool {
	if strings.TrimSpace(s) == "" {
		return true
	}
	_, _, ok := ParseEmail(s)
	return ok
}

func acceptedPhone(s string) bool {
	p := strings.TrimSpace(s)
	if p == "" {
		return true
	}
	_, ok := NormalizePhone(p)
	return ok && utf8.RuneCountInString(p) <= MaxPhoneLen
}

// random draws strings from alphabet, up to n characters.
func random(r *rand.Rand, alphabet []rune, n int) string {
	b := make([]rune, r.IntN(n+1))
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// Issue 26 item 6: every e-mail EmailPattern takes, ParseEmail takes (so a
// client checking with the OpenAPI document is never refused for its
// address), and every ASCII address ParseEmail takes, EmailPattern takes
// too, but domain literals: over hand-picked spellings and 200,000 random
// ones.
func TestEmailPatternIsParseEmails(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(EmailPattern)
	check := func(s string) {
		match, ok := re.MatchString(s), acceptedEmail(s)
		ascii := !strings.ContainsFunc(s, func(r rune) bool { return r >= utf8.RuneSelf }) && !strings.Contains(s, "[")
		if match && !ok || ascii && ok && !match && len(s) <= MaxEmailLen {
			t.Errorf("%q: pattern %v, ParseEmail %v", s, match, ok)
		}
	}
	for _, s := range []string{"", "  ", "ana@example.com", " ana@example.com\t", "Ana.Silva+tag@Example.COM", "a@b",
		"a!#$%&'*+/=?^_`{|}~-@b-c.d", ".ana@x.com", "ana.@x.com", "a..b@x.com", "ana@x..com", "ana@", "@x.com",
		"ana@@x.com", "ana x@y.com", "Ana <ana@x.com>", `"ana"@x.com`, "ana@x.com (casa)", "ana\x00@x.com",
		"ana\u200b@x.com", "joão@x.com", "ana@[192.0.2.1]", "ａｎａ@x.com", strings.Repeat("a", 250) + "@b.c"} {
		check(s)
	}
	r := rand.New(rand.NewPCG(26, 6))
	alphabet := []rune("ab.@-+_ \t\"()<>[],;:\\!~é\x00")
	for range 200_000 {
		check(random(r, alphabet, 12))
	}
}

// Issue 26 item 6: every phone PhonePattern takes (within MaxPhoneLen, the
// document's maxLength), setPhone takes, and the
// pattern takes the usual spellings (E.164 with separators, a Brazilian
// number with or without its trunk zero): over hand-picked spellings and
// 200,000 random ones.
func TestPhonePatternIsNormalizePhones(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(PhonePattern)
	for _, s := range []string{"", " ", "+55 11 91234-5678", "(11) 91234-5678", "(011) 3333-4444", "11 3333.4444",
		" +1 (415) 555-0100 ", "12345678", "+123456789012345"} {
		if !re.MatchString(s) || !acceptedPhone(s) {
			t.Errorf("%q: pattern %v, setPhone %v", s, re.MatchString(s), acceptedPhone(s))
		}
	}
	for _, s := range []string{"1234567", "+1234567", "0 0 1234567", "1234567890123456", "+1234567890123456",
		"11 3333-444a", "ramal 2", "+55 11 9999\x009999"} {
		if re.MatchString(s) {
			t.Errorf("%q: the pattern takes it", s)
		}
	}
	r := rand.New(rand.NewPCG(26, 7))
	alphabet := []rune("0123456789 0+-().\tx")
	for range 200_000 {
		// The document bounds the length beside the pattern (maxLength).
		if s := random(r, alphabet, 44); re.MatchString(s) && utf8.RuneCountInString(s) <= MaxPhoneLen && !acceptedPhone(s) {
			t.Errorf("%q: the pattern takes it, setPhone does not", s)
		}
	}
}
