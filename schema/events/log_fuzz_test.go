package events_test

import (
	"errors"
	"net/url"
	"regexp"
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

// Issue 26 item 6: TypeFilterPattern, the type filter of the OpenAPI
// document, takes exactly the values ParseFilter takes.
func TestTypeFilterPatternIsParseFilters(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(events.TypeFilterPattern())
	var wildcards []string
	for _, f := range events.Families() {
		wildcards = append(wildcards, f.Name+".*")
	}
	for _, v := range append(append(events.Names(), wildcards...), "*", "ping", "sale.*", "sale", "sale.", "sales.*", "sale.**", "Sale.created",
		"sale.created ", "xsale.created", "sale.createdx", "client.*", "stock.*", "") {
		_, err := events.ParseFilter(url.Values{"type": {v}})
		if re.MatchString(v) != (err == nil) {
			t.Errorf("%q: pattern %v, ParseFilter %v", v, re.MatchString(v), err)
		}
	}
}
