package wire

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"oficina/schema/apierr"
)

// CheckQuery refuses a query string the database could not hold: a NUL
// character or bytes that are not UTF-8 in any name or value (decoded) are
// 400 invalid_request. Query values reach SQL as text (cursors, id
// filters), and PostgreSQL text cannot carry either; without the check
// they fail there as a 500. A query that does not parse is left to the
// handlers, which read it with URL.Query.
func CheckQuery(r *http.Request) error {
	for k, vs := range r.URL.Query() {
		if !plainText(k) {
			return apierr.New(apierr.InvalidRequest)
		}
		for _, v := range vs {
			if !plainText(v) {
				return apierr.New(apierr.InvalidRequest)
			}
		}
	}
	return nil
}

func plainText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }
