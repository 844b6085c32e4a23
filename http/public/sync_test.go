package public_test

import (
	"net/url"
	"slices"
	"testing"
	"time"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
)

// Issue 26 item 2: the sync window of GET /sales and GET /service_orders
// (created_after, created_before, updated_after, updated_before; each bound
// excludes its instant), read page by page in the list's order, as the loop
// of docs/api.md does.
func TestListsTakeTheSyncWindow(t *testing.T) {
	t.Parallel()
	clock := testkit.NowClock()
	e := httpkit.NewEnv(t, httpkit.APIOptions{Now: clock.Now}, "sales:read", "sales:create", "sales:update",
		"service_orders:read", "service_orders:create", "service_orders:update")
	ts := func(t time.Time) string { return url.QueryEscape(t.UTC().Format(time.RFC3339)) }
	create := func(path string, body map[string]any) string {
		t.Helper()
		r := e.Do(t, "POST", path, body)
		if r.Status != 201 {
			t.Fatalf("POST %s: %d %s", path, r.Status, r.Raw)
		}
		return r.Body["id"].(string)
	}
	sale := customSale(1000, map[string]any{"mode": "paid_full", "payment_method": "pix", "paid_at": "2026-01-01"})
	order := map[string]any{"client_name": "Maria", "items": []map[string]any{{"description": "Visita", "quantity": 1,
		"unit_price_cents": 1000, "total_cents": 1000}}}
	for _, l := range []struct {
		path   string
		body   map[string]any
		change map[string]any
	}{
		{"/sales", sale, map[string]any{"notes": "changed"}},
		{"/service_orders", order, map[string]any{"internal_notes": "changed"}},
	} {
		t0 := clock.Now()
		a := create(l.path, l.body)
		clock.Advance(10 * time.Second)
		t1 := clock.Now()
		b := create(l.path, l.body)
		clock.Advance(10 * time.Second)
		t2 := clock.Now()
		if r := e.Do(t, "PATCH", l.path+"/"+a, l.change); r.Status != 200 {
			t.Fatalf("PATCH %s: %d %s", a, r.Status, r.Raw)
		}
		for _, tc := range []struct {
			name, query string
			want        []string
		}{
			{"created_after excludes its instant", "created_after=" + ts(t0), []string{b}},
			{"created_before", "created_before=" + ts(t1), []string{a}},
			{"updated_after", "updated_after=" + ts(t1), []string{a}},
			{"updated_before", "updated_before=" + ts(t2), []string{b}},
			{"a window", "updated_after=" + ts(t0.Add(-time.Second)) + "&updated_before=" + ts(t2.Add(time.Second)), []string{b, a}},
		} {
			// Page by page, one record a page, as a sync loop resumes.
			var got []string
			for cursor := ""; ; {
				q := tc.query + "&limit=1"
				if cursor != "" {
					q += "&starting_after=" + cursor
				}
				r := e.Do(t, "GET", l.path+"?"+q, nil)
				if r.Status != 200 {
					t.Fatalf("%s %s: %d %s", l.path, tc.name, r.Status, r.Raw)
				}
				data := r.Body["data"].([]any)
				for _, d := range data {
					got = append(got, d.(map[string]any)["id"].(string))
				}
				if !r.Body["has_more"].(bool) {
					break
				}
				cursor = got[len(got)-1]
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s %s: %v, want %v", l.path, tc.name, got, tc.want)
			}
		}
		for _, q := range []string{"updated_after=2026-01-01", "updated_before=x", "created_after=a&created_after=b"} {
			if r := e.Do(t, "GET", l.path+"?"+q, nil); r.Status != 400 || r.ErrorCode() != "invalid_request" {
				t.Errorf("%s?%s: %d %s", l.path, q, r.Status, r.Raw)
			}
		}
	}
}
