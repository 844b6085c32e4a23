package public_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/dispatch/destguard"
	"oficina/http/public"
	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/streams"
	"oficina/streams/jsconfig"
	"oficina/tenant"
)

// bodilessEnv is a company whose owner key may make every write of the
// table below, on an API with a clock that moves only when told (so a write
// run again would show in updated_at) and a publisher on JetStream.
type bodilessEnv struct {
	api   *httpkit.API
	co    *testkit.Company
	key   string
	clock *testkit.Clock
}

func newBodilessEnv(t *testing.T) *bodilessEnv {
	t.Helper()
	guard, err := destguard.New(destguard.Config{Resolver: testDNS})
	if err != nil {
		t.Fatal(err)
	}
	js := testkit.JetStream(t, jsconfig.Config{})
	e := &bodilessEnv{clock: testkit.NowClock()}
	e.api = httpkit.NewAPI(t, httpkit.APIOptions{Now: e.clock.Now, Destinations: guard,
		Publisher: streams.NewPublisher(testkit.DB(t), js, nil)})
	e.co = testkit.NewCompany(t, tenant.CompanyInput{})
	perms := append(slices.Clone(webhookPerms), orderPerms...)
	perms = append(perms, salePerms...)
	perms = append(perms, "quotes:update")
	e.key = e.co.OwnerKey(t, perms...)
	return e
}

func (e *bodilessEnv) do(t *testing.T, method, path, idemKey string) *httpkit.Response {
	t.Helper()
	var h map[string]string
	if idemKey != "" {
		h = map[string]string{public.IdempotencyHeader: idemKey}
	}
	return e.api.Do(t, httpkit.Req{Method: method, Path: path, Key: e.key, Header: h})
}

// must sends a request (JSON body) and returns its body, failing unless 2xx.
func (e *bodilessEnv) must(t *testing.T, method, path string, body any) map[string]any {
	t.Helper()
	r := e.api.Do(t, httpkit.Req{Method: method, Path: path, Key: e.key, Body: body})
	if r.Status >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Raw)
	}
	return r.Body
}

func (e *bodilessEnv) endpoint(t *testing.T) string {
	t.Helper()
	return e.must(t, "POST", "/webhook_endpoints", map[string]any{"url": hookURL, "events": []string{"*"}})["id"].(string)
}

func (e *bodilessEnv) order(t *testing.T) string {
	t.Helper()
	return e.must(t, "POST", "/service_orders", map[string]any{"client_name": "Cliente"})["id"].(string)
}

func (e *bodilessEnv) sale(t *testing.T) map[string]any {
	t.Helper()
	return e.must(t, "POST", "/sales", customSale(5000, map[string]any{"mode": "paid_full", "payment_method": "pix", "paid_at": "2026-01-01"}))
}

// state is what a write changes: the resource as GET shows it, and the
// company's events, deliveries, sales and stored idempotent answers.
func (e *bodilessEnv) state(t *testing.T, get string) string {
	t.Helper()
	r := e.api.Do(t, httpkit.Req{Method: "GET", Path: get, Key: e.key})
	shown := string(r.Raw)
	if r.Status >= 400 {
		shown = r.ErrorCode() // not its request_id
	}
	var counts [3]int
	e.co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		for i, table := range []string{"event_outbox", "webhook_deliveries", "sales"} {
			if err := tx.NewSelect().Table(table).ColumnExpr("count(*)").Scan(ctx, &counts[i]); err != nil {
				return err
			}
		}
		return nil
	})
	return fmt.Sprintf("GET %s: %d %s\nevents %d, deliveries %d, sales %d", get, r.Status, shown, counts[0], counts[1], counts[2])
}

// bodilessWrite is a write sent without a body, on a resource of its own.
type bodilessWrite struct {
	name   string
	method string
	// setup makes the resource and returns the write's path and the GET
	// path that shows its effect.
	setup  func(t *testing.T, e *bodilessEnv) (path, get string)
	status int
	// omit are fields the first answer has and a replay leaves out (spec
	// 4.1: a secret is shown once).
	omit []string
}

var bodilessWrites = []bodilessWrite{
	{name: "ping", method: "POST", status: 202, setup: func(t *testing.T, e *bodilessEnv) (string, string) {
		id := e.endpoint(t)
		return "/webhook_endpoints/" + id + "/ping", "/webhook_endpoints/" + id + "/deliveries"
	}},
	{name: "ping a disabled endpoint (409)", method: "POST", status: 409, setup: func(t *testing.T, e *bodilessEnv) (string, string) {
		id := e.endpoint(t)
		e.must(t, "POST", "/webhook_endpoints/"+id+"/disable", nil)
		return "/webhook_endpoints/" + id + "/ping", "/webhook_endpoints/" + id + "/deliveries"
	}},
	{name: "disable", method: "POST", status: 200, setup: func(t *testing.T, e *bodilessEnv) (string, string) {
		id := e.endpoint(t)
		return "/webhook_endpoints/" + id + "/disable", "/webhook_endpoints/" + id
	}},
	{name: "enable", method: "POST", status: 200, setup: func(t *testing.T, e *bodilessEnv) (string, string) {
		id := e.endpoint(t)
		e.must(t, "POST", "/webhook_endpoints/"+id+"/disable", nil)
		return "/webhook_endpoints/" + id + "/enable", "/webhook_endpoints/" + id
	}},
	{name: "delete", method: "DELETE", status: 200, setup: func(t *testing.T, e *bodilessEnv) (string, string) {
		id := e.endpoint(t)
		return "/webhook_endpoints/" + id, "/webhook_endpoints/" + id
	}},
	{name: "resend", method: "POST", status: 202, setup: func(t *testing.T, e *bodilessEnv) (string, string) {
		id := e.endpoint(t)
		e.must(t, "POST", "/webhook_endpoints/"+id+"/ping", nil)
		log := e.must(t, "GET", "/webhook_endpoints/"+id+"/deliveries", nil)["data"].([]any)
		did := log[0].(map[string]any)["id"].(string)
		return "/webhook_endpoints/" + id + "/deliveries/" + did + "/resend", "/webhook_endpoints/" + id + "/deliveries"
	}},
	{name: "rotate_secret", method: "POST", status: 200, omit: []string{"secret"}, setup: func(t *testing.T, e *bodilessEnv) (string, string) {
		id := e.endpoint(t)
		return "/webhook_endpoints/" + id + "/rotate_secret", "/webhook_endpoints/" + id
	}},
	{name: "start a service order", method: "POST", status: 200, setup: func(t *testing.T, e *bodilessEnv) (string, string) {
		id := e.order(t)
		return "/service_orders/" + id + "/start", "/service_orders/" + id
	}},
	{name: "cancel a service order", method: "POST", status: 200, setup: func(t *testing.T, e *bodilessEnv) (string, string) {
		id := e.order(t)
		return "/service_orders/" + id + "/cancel", "/service_orders/" + id
	}},
	{name: "complete a service order", method: "POST", status: 200, setup: func(t *testing.T, e *bodilessEnv) (string, string) {
		id := e.order(t)
		return "/service_orders/" + id + "/complete", "/service_orders/" + id
	}},
	{name: "cancel a sale without a reason (422)", method: "POST", status: 422, setup: func(t *testing.T, e *bodilessEnv) (string, string) {
		id := e.sale(t)["id"].(string)
		return "/sales/" + id + "/cancel", "/sales/" + id
	}},
	{name: "convert a quote to a sale", method: "POST", status: 201, setup: func(t *testing.T, e *bodilessEnv) (string, string) {
		return "/quotes/" + e.quote(t, map[string]any{"mode": "paid_full", "payment_method": "pix"}) + "/convert_to_sale", "/sales?limit=100"
	}},
	{name: "convert a quote without a payment plan", method: "POST", status: 201, setup: func(t *testing.T, e *bodilessEnv) (string, string) {
		return "/quotes/" + e.quote(t, nil) + "/convert_to_sale", "/sales?limit=100"
	}},
}

// quote is an approved quote with plan (nil: none).
func (e *bodilessEnv) quote(t *testing.T, plan map[string]any) string {
	t.Helper()
	body := map[string]any{"client_name": "Cliente", "status": "approved",
		"items": []map[string]any{{"description": "Cabo", "quantity": 1, "unit_price_cents": 1000, "total_cents": 1000}}}
	if plan != nil {
		body["payment_plan"] = plan
	}
	q := e.api.Admin(t, "POST", "/companies/"+e.co.Company.ID+"/quotes", body)
	if q.Status != 201 {
		t.Fatalf("quote: %d %s", q.Status, q.Raw)
	}
	return q.Body["id"].(string)
}

// Spec 4.1: a write sent with an Idempotency-Key answers as it does without
// one — body-less writes included — and a retry with the key gets the same
// status, body and headers while the write happens once. (POST
// /webhook_endpoints/{id}/ping with a key answered 500, its empty answer
// refused by idempotency_records.body NOT NULL, and no ping was sent.)
func TestIdempotencyKeyOnBodilessWritesAnswersAsWithout(t *testing.T) {
	t.Parallel()
	e := newBodilessEnv(t)
	for i, tc := range bodilessWrites {
		t.Run(tc.name, func(t *testing.T) {
			plainPath, _ := tc.setup(t, e)
			plain := e.do(t, tc.method, plainPath, "")
			if plain.Status != tc.status {
				t.Fatalf("without a key: %d %s", plain.Status, plain.Raw)
			}

			path, get := tc.setup(t, e)
			before := e.state(t, get)
			key := fmt.Sprintf("bodiless-%d", i)
			first := e.do(t, tc.method, path, key)
			if first.Status != plain.Status || first.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("with a key: %d %s; without: %d %s", first.Status, first.Raw, plain.Status, plain.Raw)
			}
			if a, b := jsonShape(plain.Body), jsonShape(first.Body); a != b || (len(plain.Raw) == 0) != (len(first.Raw) == 0) {
				t.Fatalf("with a key the answer differs:\n%s\n%s", first.Raw, plain.Raw)
			}
			after := e.state(t, get)
			if tc.status < 300 && after == before {
				t.Fatalf("the write with a key changed nothing:\n%s", after)
			}
			if tc.status >= 300 && after != before {
				t.Fatalf("a refused write changed:\n%s\n%s", before, after)
			}

			e.clock.Advance(time.Minute) // a write run again would stamp another time
			again := e.do(t, tc.method, path, key)
			if again.Status != first.Status || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("replay: %d %v %s", again.Status, again.Header, again.Raw)
			}
			want := first.Body
			for _, f := range tc.omit {
				if _, ok := want[f]; !ok {
					t.Fatalf("the first answer has no %q: %s", f, first.Raw)
				}
				delete(want, f)
			}
			if tc.status >= 400 {
				// An error is rendered again (this request's request_id and
				// language): the same code and fields.
				if again.ErrorCode() != first.ErrorCode() || mustJSON(t, errorParams(again)) != mustJSON(t, errorParams(first)) {
					t.Fatalf("replayed error differs:\n%s\n%s", first.Raw, again.Raw)
				}
			} else if a, b := mustJSON(t, want), mustJSON(t, again.Body); a != b || (len(first.Raw) == 0) != (len(again.Raw) == 0) {
				t.Fatalf("replayed body differs:\n%s\n%s", a, b)
			}
			for _, h := range []string{"Content-Type", "Content-Length", "Location"} {
				a, b, c := plain.Header.Get(h), first.Header.Get(h), again.Header.Get(h)
				if (a == "") != (b == "") || b != c && h != "Content-Length" || h == "Content-Type" && a != b {
					t.Errorf("%s: without a key %q, first %q, replay %q", h, a, b, c)
				}
			}
			if again.Header.Get("Request-Id") == "" || again.Header.Get("Request-Id") == first.Header.Get("Request-Id") {
				t.Errorf("replay Request-Id %q (first %q)", again.Header.Get("Request-Id"), first.Header.Get("Request-Id"))
			}
			if now := e.state(t, get); now != after {
				t.Fatalf("the replay wrote again:\n%s\n%s", after, now)
			}
		})
	}
}

// jsonShape is a decoded JSON value with every scalar replaced by its type:
// two answers about different records compare by their fields.
func jsonShape(v any) string {
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, y := range x {
				out[k] = walk(y)
			}
			return out
		case []any:
			// Items in any order: records made in the same instant (a
			// sale's finance transactions) have no order of their own.
			out := make([]string, len(x))
			for i, y := range x {
				b, _ := json.Marshal(walk(y))
				out[i] = string(b)
			}
			slices.Sort(out)
			return out
		case nil:
			return "null"
		default:
			return fmt.Sprintf("%T", x)
		}
	}
	b, _ := json.Marshal(walk(v))
	return string(b)
}
