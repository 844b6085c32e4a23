package public_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/streams"
	"oficina/tenant"
)

// eventsEnv is a company whose events are written straight to the log (as a
// write's streams.Record does), each at its own time, and an API to read
// them through.
type eventsEnv struct {
	api *httpkit.API
	co  *testkit.Company
	at  time.Time
}

func newEventsEnv(t *testing.T) *eventsEnv {
	t.Helper()
	return &eventsEnv{api: httpkit.NewAPI(t, httpkit.APIOptions{}), co: testkit.NewCompany(t, tenant.CompanyInput{}),
		at: time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)}
}

// record writes one event of type typ about the record id, a second after
// the previous one, and returns its id.
func (e *eventsEnv) record(t *testing.T, typ, id string) string {
	t.Helper()
	e.at = e.at.Add(time.Second)
	var out string
	e.co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		w := &streams.Write{Tx: tx, CompanyID: e.co.Company.ID, Actor: streams.Actor{Kind: streams.ActorAPI}, At: e.at}
		obj := map[string]any{"object": streams.Family(typ), "id": id}
		rs, err := streams.Record(ctx, w, streams.Change{Type: typ, Object: obj, ChangedFields: []string{"status"}})
		if err == nil {
			out = rs[0].ID
		}
		return err
	})
	return out
}

// list is GET /events?query with key: the ids in order, and has_more.
func (e *eventsEnv) list(t *testing.T, key, query string) ([]string, bool, *httpkit.Response) {
	t.Helper()
	r := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/events?" + query, Key: key})
	if r.Status != 200 {
		return nil, false, r
	}
	var got []string
	for _, d := range r.Body["data"].([]any) {
		got = append(got, d.(map[string]any)["id"].(string))
	}
	return got, r.Body["has_more"].(bool), r
}

func reversed(ids ...string) []string {
	out := slices.Clone(ids)
	slices.Reverse(out)
	return out
}

// Issue 26 item 1: every event of the company is listed, whether or not an
// endpoint subscribed, newest first, each exactly as its webhooks carry it
// (the stored envelope, byte for byte), and read alone by id.
func TestEventsAreListedNewestFirstExactlyAsDelivered(t *testing.T) {
	t.Parallel()
	e := newEventsEnv(t)
	key := e.co.OwnerKey(t, "events:read", "sales:read", "clients:read")
	a := e.record(t, "sale.created", "sal_1")
	b := e.record(t, "client.created", "cli_1")
	c := e.record(t, "sale.updated", "sal_1")
	got, more, r := e.list(t, key, "")
	if !slices.Equal(got, []string{c, b, a}) || more {
		t.Fatalf("list %v (more %v), want %v: %d %s", got, more, []string{c, b, a}, r.Status, r.Raw)
	}
	var stored []byte
	e.co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewRaw("SELECT body FROM event_outbox WHERE id = ?", c).Scan(ctx, &stored)
	})
	one := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/events/" + c, Key: key})
	if one.Status != 200 || string(one.Raw) != string(stored)+"\n" {
		t.Fatalf("GET /events/%s: %d\n%s\nwant the stored body\n%s", c, one.Status, one.Raw, stored)
	}
	for _, id := range []string{"evt_00000000000000000000000000000000", "evt_x", "sal_1", "%00", "evt_" + strings.Repeat("0", 33)} {
		if r := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/events/" + id, Key: key}); r.Status != 404 || r.ErrorCode() != "resource_not_found" {
			t.Errorf("event %q: %d %s", id, r.Status, r.Raw)
		}
	}
}

// Issue 26 item 1: each filter of GET /events, alone and together, and
// what it refuses.
func TestEventsFilters(t *testing.T) {
	t.Parallel()
	e := newEventsEnv(t)
	key := e.co.OwnerKey(t, "events:read", "sales:read", "clients:read", "service_orders:read")
	s1 := e.record(t, "sale.created", "sal_1")
	o1 := e.record(t, "service_order.created", "so_1")
	mid := e.at
	s2 := e.record(t, "sale.paid", "sal_2")
	c1 := e.record(t, "client.created", "cli_1")
	s3 := e.record(t, "sale.updated", "sal_1")
	// Deliveries: s1 failed to one endpoint and then a resend succeeded
	// (received); s2 still pending at one endpoint; c1 received.
	e.co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		for i, d := range []struct{ event, endpoint, status string }{
			{s1, "we_1", "failed"}, {s1, "we_1", "succeeded"}, {s2, "we_1", "succeeded"}, {s2, "we_2", "pending"},
			{c1, "we_1", "succeeded"},
		} {
			if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, company_id, endpoint_id, event_id, event_type, status)
				VALUES (?, ?, ?, ?, 'x', ?)`, fmt.Sprintf("dlv_test%d_%s", i, e.co.Company.ID), e.co.Company.ID, d.endpoint, d.event, d.status); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, "UPDATE event_outbox SET has_deliveries = true WHERE id IN (?, ?, ?)", s1, s2, c1)
		return err
	})
	ts := func(t time.Time) string { return url.QueryEscape(t.Format(time.RFC3339)) }
	for _, tc := range []struct {
		name, query string
		want        []string
	}{
		{"a name", "type=sale.created", []string{s1}},
		{"a family", "type=sale.*", reversed(s1, s2, s3)},
		{"several", "type=client.created&type=service_order.*", reversed(o1, c1)},
		{"created_after is inclusive", "created_after=" + ts(mid), reversed(o1, s2, c1, s3)},
		{"created_before excludes its instant", "created_before=" + ts(mid), []string{s1}},
		{"a window", "created_after=" + ts(mid) + "&created_before=" + ts(mid.Add(2*time.Second)), reversed(o1, s2)},
		{"object_id", "object_id=sal_1", reversed(s1, s3)},
		{"object_id and type", "object_id=sal_1&type=sale.updated", []string{s3}},
		{"not received by some endpoint", "delivery_success=false", []string{s2}},
		{"received by every endpoint", "delivery_success=true", reversed(s1, c1)},
	} {
		got, _, r := e.list(t, key, tc.query)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s (%s): %v, want %v (%d %s)", tc.name, tc.query, got, tc.want, r.Status, r.Raw)
		}
	}
	for _, q := range []string{"type=sale.nope", "type=nope.*", "type=*", "created_after=2026-11-20T12:00:00.5Z",
		"created_after=2026-11-20", "object_id=not%20an%20id", "delivery_success=maybe", "color=red",
		"object_id=a&object_id=b", "starting_after=evt_00000000000000000000000000000000", "starting_after=sal_1",
		"starting_after=evt_'%3B--"} {
		if _, _, r := e.list(t, key, q); r == nil || r.Status != 400 || r.ErrorCode() != "invalid_request" {
			t.Errorf("%s: want 400 invalid_request, got %v", q, r)
		}
	}
}

// Issue 26 item 1, permission trimming: a key sees only the events of the
// modules it may read, as a subscription would — without finance:read no
// financial_transaction event, listed or by id; without webhooks:read no
// operational event (issue 27); without events:read, none.
func TestEventsAreTrimmedToTheModulesTheKeyMayRead(t *testing.T) {
	t.Parallel()
	e := newEventsEnv(t)
	sale := e.record(t, "sale.created", "sal_1")
	fin := e.record(t, "financial_transaction.created", "fin_1")
	stock := e.record(t, "stock.changed", "stk_1")
	disabled := e.record(t, "webhook_endpoint.disabled", "we_1")
	all := e.co.OwnerKey(t, "events:read", "sales:read", "finance:read", "products:read", "webhooks:read")
	noFinance := e.co.OwnerKey(t, "events:read", "sales:read", "products:read")
	for _, tc := range []struct {
		name, key string
		want      []string
	}{
		{"every module", all, reversed(sale, fin, stock, disabled)},
		{"no finance:read (nor webhooks:read)", noFinance, reversed(sale, stock)},
		{"no finance:read, asking for finance", noFinance + "|type=financial_transaction.*", nil},
		{"the operational events need webhooks:read", all + "|type=webhook_endpoint.*", []string{disabled}},
		{"without it, none", noFinance + "|type=webhook_endpoint.disabled", nil},
	} {
		key, query, _ := cut(tc.key)
		got, _, r := e.list(t, key, query)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v (%d %s)", tc.name, got, tc.want, r.Status, r.Raw)
		}
	}
	if r := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/events/" + fin, Key: noFinance}); r.Status != 404 {
		t.Errorf("a finance event by id without finance:read: %d %s", r.Status, r.Raw)
	}
	// A member whose role does not reach finance trims the same way, even
	// with a key that holds finance:read.
	member := e.co.Member(t, tenant.MemberInput{Role: testkit.Ptr(tenant.RoleMember),
		Permissions: &tenant.MemberPermissions{"events": {"read"}, "sales": {"read"}, "products": {"read"}}})
	memberKey := e.co.Key(t, member, "events:read", "sales:read", "finance:read", "products:read").Secret
	if got, _, r := e.list(t, memberKey, ""); !slices.Equal(got, reversed(sale, stock)) {
		t.Errorf("member without finance access: %v (%d %s)", got, r.Status, r.Raw)
	}
	none := e.co.OwnerKey(t, "sales:read")
	if r := e.api.Do(t, httpkit.Req{Method: "GET", Path: "/events", Key: none}); r.Status != 403 || r.ErrorCode() != "permission_missing" {
		t.Errorf("without events:read: %d %s", r.Status, r.Raw)
	}
}

// cut splits "key|query".
func cut(s string) (key, query string, ok bool) {
	for i := range s {
		if s[i] == '|' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// Issue 26 item 1: paging with the cursor while the company keeps
// writing lists every event that existed when the walk began exactly
// once; the new ones are newer than the first page and never shift it.
func TestEventsCursorSkipsAndRepeatsNothingUnderConcurrentWrites(t *testing.T) {
	t.Parallel()
	e := newEventsEnv(t)
	key := e.co.OwnerKey(t, "events:read", "sales:read")
	var before []string
	for i := range 30 {
		before = append(before, e.record(t, "sale.updated", fmt.Sprintf("sal_%d", i)))
	}
	// The first page, then a writer that keeps adding events while the
	// walk goes on.
	query := "type=sale.updated&limit=7"
	seen, more, r := e.list(t, key, query)
	if r.Status != 200 || !more {
		t.Fatalf("first page: %d %s", r.Status, r.Raw)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		w := &eventsEnv{api: e.api, co: e.co, at: e.at}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
				w.record(t, "sale.updated", fmt.Sprintf("sal_new_%d", i))
			}
		}
	})
	for more {
		var got []string
		got, more, r = e.list(t, key, query+"&starting_after="+seen[len(seen)-1])
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
		seen = append(seen, got...)
	}
	close(stop)
	wg.Wait()
	if !slices.Equal(seen, reversed(before...)) {
		t.Fatalf("walked %d events %v, want the %d that existed, newest first, once each", len(seen), seen, len(before))
	}
}
