package wire

import (
	"net/http/httptest"
	"testing"

	"oficina/schema/apierr"
)

// Query values reach SQL as text: a NUL or bytes that are not UTF-8 are
// 400 before any handler runs, instead of a 500 from the database.
func TestCheckQueryRefusesWhatTheDatabaseCannotHold(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]apierr.Code{
		"":                                "",
		"limit=10&starting_after=sale_01": "",
		"client_id=cli_%C3%A9":            "",
		"starting_after=%00":              apierr.InvalidRequest,
		"client_id=a%00b":                 apierr.InvalidRequest,
		"%00=1":                           apierr.InvalidRequest,
		"starting_after=%FF":              apierr.InvalidRequest,
		"status=%C3":                      apierr.InvalidRequest,
	} {
		r := httptest.NewRequest("GET", "/public/v1/sales?"+q, nil)
		if code, _, _ := fieldOf(CheckQuery(r)); code != want {
			t.Errorf("%q: %q, want %q", q, code, want)
		}
	}
}
