package clients

import (
	"net/mail"
	"strings"
)

// NormalizeEmail lower-cases a syntactically valid address; e-mail matching
// is case-insensitive for de-duplication (docs/api.md).
func NormalizeEmail(s string) (string, bool) {
	s = strings.TrimSpace(s)
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || len(s) > 254 {
		return "", false
	}
	return strings.ToLower(s), true
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
