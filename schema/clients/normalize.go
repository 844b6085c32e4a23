package clients

import (
	"net/mail"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// ParseEmail checks an e-mail address and returns it as stored and its
// de-duplication key (docs/api.md, "E-mail addresses"):
//   - an address holding a character that shows nothing or moves the text
//     around it (hidden) is refused: ana\u200b@example.com would otherwise
//     look like ana@example.com and be another client;
//   - it is stored in NFC, so the composed and decomposed spellings of
//     "é" are one address;
//   - its key is NFKC and lower case, so fullwidth and other compatibility
//     forms (ａｎａ@ｅｘａｍｐｌｅ.ｃｏｍ) match the plain letters, and case
//     does not count.
//
// ok is false when s (trimmed) is not one bare address of at most 254
// bytes, holds a hidden character, or its key is not an address.
func ParseEmail(s string) (stored, key string, ok bool) {
	s = strings.TrimSpace(s)
	if strings.ContainsFunc(s, hidden) {
		return "", "", false
	}
	s = norm.NFC.String(s)
	if !bareAddress(s) || len(s) > MaxEmailLen {
		return "", "", false
	}
	key = norm.NFKC.String(strings.ToLower(norm.NFKC.String(s)))
	if strings.ContainsFunc(key, hidden) || !bareAddress(key) {
		return "", "", false
	}
	return s, key, true
}

// NormalizeEmail returns the de-duplication key of a valid address
// (ParseEmail).
func NormalizeEmail(s string) (string, bool) {
	_, key, ok := ParseEmail(s)
	return key, ok
}

// bareAddress reports whether s is one address without a display name.
func bareAddress(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s
}

// hidden reports whether r shows nothing or changes how the text around it
// is shown: controls; format characters (zero-width space, non-joiner and
// joiner, word joiner, BOM, soft hyphen, the bidirectional marks,
// embeddings, overrides and isolates U+200E–F, U+202A–E, U+2066–9); variation
// selectors; the other default-ignorable code points (Hangul fillers, the
// combining grapheme joiner, tags); and spaces and line separators of any
// width. The migration that re-keyed stored addresses strips the same
// invisible ones (20261128002410_client_email_keys).
func hidden(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zs, unicode.Zl, unicode.Zp,
		unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}

// NormalizePhone reduces a phone to E.164-like digits: "+" and a country
// code are kept; a number without one is taken as Brazilian (+55) when it
// has 10 or 11 digits (area code + number), the company's market. Leading
// trunk zeros are dropped. 8 to 15 digits are accepted.
func NormalizePhone(s string) (string, bool) {
	intl := strings.HasPrefix(strings.TrimSpace(s), "+") || strings.HasPrefix(strings.TrimSpace(s), "00")
	var d []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			d = append(d, c)
		case c == ' ' || c == '-' || c == '(' || c == ')' || c == '.' || c == '+':
		default:
			return "", false
		}
	}
	digits := string(d)
	if strings.HasPrefix(strings.TrimSpace(s), "00") {
		digits = strings.TrimPrefix(digits, "00")
	}
	if !intl {
		digits = strings.TrimLeft(digits, "0")
		if len(digits) == 10 || len(digits) == 11 {
			digits = "55" + digits
		}
	}
	if len(digits) < 8 || len(digits) > 15 {
		return "", false
	}
	return "+" + digits, true
}
