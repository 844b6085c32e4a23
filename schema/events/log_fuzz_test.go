package events_test

import (
	"errors"
	"net/url"
	"testing"

	"oficina/schema/apierr"
	"oficina/schema/events"
	"oficina/schema/page"
)

// GET /events' query, whatever its bytes: ParseFilter (and the page and
// sync windows the lists share) either reads it or refuses it as 400
// invalid_request — never another error, never a panic — and what it reads
// names only catalogued types.
func FuzzEventsQuery(f *testing.F) {
	for _, s := range []string{"", "type=sale.*&type=client.created", "created_after=2026-01-01T00:00:00Z",
		"object_id=sal_1&delivery_success=false", "type=*", "type=%00", "limit=0", "updated_after=x&updated_after=y",
		"starting_after=evt_1&limit=100", "delivery_success=TRUE"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		refused := func(err error) {
			var e *apierr.Error
			if err != nil && (!errors.As(err, &e) || e.Status() != 400) {
				t.Fatalf("%q: %v, want 400 invalid_request or nothing", raw, err)
			}
		}
		fl, err := events.ParseFilter(q)
		refused(err)
		if err == nil {
			for _, n := range fl.Types {
				if _, ok := events.Lookup(n); !ok {
					t.Fatalf("%q: filter names %q, not in the catalogue", raw, n)
				}
			}
		}
		_, err = page.ParseSync(q)
		refused(err)
		_, err = page.Parse(q)
		refused(err)
	})
}
