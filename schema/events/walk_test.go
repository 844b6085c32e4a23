package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/uptrace/bun"

	"oficina/dispatch"
	"oficina/ops/testkit"
	"oficina/ops/testkit/hooks"
	"oficina/ops/testkit/httpkit"
	"oficina/schema/events"
	"oficina/streams"
	"oficina/streams/jsconfig"
	"oficina/tenant"
)

// walkPartitions of DELIVERIES in the walk (fewer leases than the default).
const walkPartitions = 4

// Spec 6.1–6.4 and issue 14: the catalogue walk. For every catalogued event
// type a real write over HTTP (public API or admin API) emits it, and it
// arrives both at an enabled endpoint subscribed to "*" — a real HTTPS
// receiver fed by a running dispatcher, every signature verified with the
// Standard Webhooks library — and on the EVENTS stream
// (oficina.events.<company>.<type>). The operational events (decision
// 0037), which "*" leaves out, arrive instead at a monitor subscribed to
// their families, about a troubled endpoint the walk disables, fails and
// gives a certificate; the "*" endpoint never gets one. A name without a
// write recipe fails, and so does any arrival whose type is not in the
// table or whose data.object is not the kind and shape the table declares.
// Ping arrives at the endpoint only, never on EVENTS.
func TestEveryCataloguedEventArrivesAtTheEndpointAndOnEvents(t *testing.T) {
	t.Parallel()
	steps := walkSteps()
	recipe := map[string]string{}
	for _, s := range steps {
		for _, n := range s.emits {
			recipe[n] = s.name
		}
	}
	for _, n := range events.Names() {
		if recipe[n] == "" {
			t.Errorf("%s: no write recipe in the catalogue walk", n)
		}
	}
	w := newWalk(t)
	for _, s := range steps {
		s.do(t, w)
	}
	w.public(t, "POST", "/webhook_endpoints/"+w.endpoint+"/ping", nil, 202)
	w.await(t, recipe)
}

// walk is one company with an owner key holding every permission, three
// endpoints on a local receiver — subscribed to "*" at /hook, to the
// operational families at /monitor, to clients at /troubled (which answers
// 503 while troubled is set) — a dispatcher, a relay (what the dispatcher
// records waits in the backlog for it), and a reader of its EVENTS
// subjects.
type walk struct {
	api      *httpkit.API
	co       *testkit.Company
	key      string
	endpoint string            // the "*" one
	secrets  map[string]string // by path
	troubled atomic.Bool
	got      chan testkit.Received
	stream   chan jetstream.Msg
	ids      map[string]string // ids remembered between steps
}

func newWalk(t *testing.T) *walk {
	t.Helper()
	ctx := context.Background()
	js := testkit.JetStream(t, jsconfig.Config{Partitions: walkPartitions})
	w := &walk{stream: make(chan jetstream.Msg, 1000), ids: map[string]string{}, secrets: map[string]string{}}
	srv, got := testkit.Receiver(t, func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/troubled" && w.troubled.Load() {
			rw.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		rw.WriteHeader(http.StatusNoContent)
	})
	w.got = got
	guard := testkit.LoopbackGuard(t, srv)
	w.api = httpkit.NewAPI(t, httpkit.APIOptions{Publisher: streams.NewPublisher(testkit.DB(t), js, nil), Destinations: guard})
	w.co = testkit.NewCompany(t, tenant.CompanyInput{})
	w.key = w.co.OwnerKey(t, tenant.AllPermissions()...)

	for path, subscribed := range map[string][]string{"/hook": {"*"}, "/monitor": {"webhook_endpoint.*", "webhook_delivery.*"},
		"/troubled": {"client.*"}} {
		ep := w.public(t, "POST", "/webhook_endpoints", map[string]any{"url": srv.URL + path, "events": subscribed}, 201)
		w.ids[path], w.secrets[path] = ep["id"].(string), ep["secret"].(string)
	}
	w.endpoint = w.ids["/hook"]
	testkit.Dispatcher(t, dispatch.Config{JS: js, Client: guard.Client(), CertifiedClient: guard.ClientWithCertificate,
		Partitions: walkPartitions})
	testkit.Relay(t, js, w.co.Company.ID)

	filter, err := jsconfig.CompanyEventsFilter(w.co.Company.ID)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := js.OrderedConsumer(ctx, jsconfig.EventsStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) { w.stream <- m })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cc.Stop)
	return w
}

// public sends a public API request and fails the test unless it answers
// want; it returns the decoded body.
func (w *walk) public(t *testing.T, method, path string, body any, want int) map[string]any {
	t.Helper()
	r := w.api.Do(t, httpkit.Req{Method: method, Path: path, Key: w.key, Body: body})
	if r.Status != want {
		t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Raw)
	}
	return r.Body
}

// admin sends an admin API request for the company (path relative to
// /admin/v1/companies/{company}).
func (w *walk) admin(t *testing.T, method, path string, body any, want int) map[string]any {
	t.Helper()
	r := w.api.Admin(t, method, "/companies/"+w.co.Company.ID+path, body)
	if r.Status != want {
		t.Fatalf("admin %s %s: %d %s", method, path, r.Status, r.Raw)
	}
	return r.Body
}

// remember keeps body's id under name and returns it.
func (w *walk) remember(name string, body map[string]any) string {
	id, _ := body["id"].(string)
	w.ids[name] = id
	return id
}

// arrival is what the walk has seen of one event type.
type arrival struct{ hooked, streamed int }

// await reads the receiver and EVENTS until every catalogued type (and
// ping) arrived where it should and every event on EVENTS reached the
// endpoint, checking each arrival, or fails after a minute naming what is
// missing and the step that should have sent it.
func (w *walk) await(t *testing.T, recipe map[string]string) {
	t.Helper()
	seen := map[string]*arrival{}
	at := func(typ string) *arrival {
		if seen[typ] == nil {
			seen[typ] = &arrival{}
		}
		return seen[typ]
	}
	hookIDs, streamIDs := map[string]bool{}, map[string]bool{}
	missing := func() []string {
		var out []string
		for _, n := range events.Names() {
			if a := at(n); a.hooked == 0 || a.streamed == 0 {
				out = append(out, fmt.Sprintf("%s (endpoint %d, EVENTS %d; step %q)", n, a.hooked, a.streamed, recipe[n]))
			}
		}
		if at(events.Ping.Name).hooked == 0 {
			out = append(out, "ping at the endpoint")
		}
		for id := range streamIDs {
			if !hookIDs[id] {
				out = append(out, "event "+id+" from EVENTS at the endpoint")
			}
		}
		return out
	}
	deadline := time.After(time.Minute)
	for len(missing()) > 0 {
		select {
		case r := <-w.got:
			id, typ := w.checkDelivery(t, r)
			hookIDs[id] = true
			at(typ).hooked++
			if r.Path == "/hook" && events.Operational(typ) {
				t.Errorf("the \"*\" endpoint got %s", typ)
			}
		case m := <-w.stream:
			id, typ := w.checkStreamed(t, m)
			streamIDs[id] = true
			at(typ).streamed++
		case <-deadline:
			t.Fatalf("after a minute, still missing:\n%s", strings.Join(missing(), "\n"))
		}
	}
	if n := at(events.Ping.Name).streamed; n != 0 {
		t.Errorf("ping on EVENTS %d times", n)
	}
}

// envelope is the part of a body the walk checks.
type envelope struct {
	ID             string `json:"id"`
	Type           string `json:"type"`
	OrganizationID string `json:"organization_id"`
	Data           struct {
		Object    map[string]json.RawMessage `json:"object"`
		Truncated bool                       `json:"object_truncated"`
	} `json:"data"`
}

// checkDelivery verifies a webhook request: the signature, webhook-id, and
// the body against the table (the receiver has checked it against the
// OpenAPI document's webhooks section).
func (w *walk) checkDelivery(t *testing.T, r testkit.Received) (id, typ string) {
	t.Helper()
	if err := hooks.Verify(w.secrets[r.Path], r); err != nil {
		t.Errorf("delivery %s: signature: %v", r.Header.Get("webhook-id"), err)
	}
	ev := w.checkBody(t, "endpoint", r.Body)
	if h := r.Header.Get("webhook-id"); h != ev.ID {
		t.Errorf("webhook-id %s for body id %s", h, ev.ID)
	}
	return ev.ID, ev.Type
}

// checkStreamed verifies an EVENTS message: its subject, Nats-Msg-Id and
// body against the table; ping never comes here.
func (w *walk) checkStreamed(t *testing.T, m jetstream.Msg) (id, typ string) {
	t.Helper()
	ev := w.checkBody(t, "EVENTS", m.Data())
	if want, err := jsconfig.EventSubject(w.co.Company.ID, ev.Type); err != nil || m.Subject() != want {
		t.Errorf("%s on subject %s, want %s (%v)", ev.Type, m.Subject(), want, err)
	}
	if h := m.Headers().Get(jetstream.MsgIDHeader); h != ev.ID {
		t.Errorf("Nats-Msg-Id %s for event %s", h, ev.ID)
	}
	return ev.ID, ev.Type
}

// checkBody checks an envelope against the table: a catalogued type (or
// ping), this company, and a data.object of the declared kind with exactly
// the keys of the declared Go type.
func (w *walk) checkBody(t *testing.T, where string, body []byte) envelope {
	t.Helper()
	var ev envelope
	if err := json.Unmarshal(body, &ev); err != nil {
		t.Fatalf("%s: body %s: %v", where, body, err)
	}
	et, ok := events.Lookup(ev.Type)
	if ev.Type == events.Ping.Name {
		et, ok = events.Ping, true
	}
	if !ok {
		t.Errorf("%s: %s arrived but is not in the event table", where, ev.Type)
		return ev
	}
	if ev.OrganizationID != w.co.Company.ID {
		t.Errorf("%s: %s for organization %s", where, ev.Type, ev.OrganizationID)
	}
	var kind string
	_ = json.Unmarshal(ev.Data.Object["object"], &kind)
	if kind != et.Kind {
		t.Errorf("%s: %s carries object %q, the table says %q", where, ev.Type, kind, et.Kind)
	}
	if ev.Data.Truncated {
		return ev
	}
	keys := make([]string, 0, len(ev.Data.Object))
	for k := range ev.Data.Object {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := jsonKeys(t, et.Object); !slices.Equal(keys, want) {
		t.Errorf("%s: %s object keys %v, the table's %T renders %v", where, ev.Type, keys, et.Object, want)
	}
	return ev
}

// step is one real write of the walk and the event types it emits.
type step struct {
	name  string
	emits []string
	do    func(t *testing.T, w *walk)
}

// walkSteps are the writes of the walk, in order; later steps use the ids
// earlier ones remembered.
func walkSteps() []step {
	return []step{
		{"dashboard client", []string{"client.created", "client.updated"}, func(t *testing.T, w *walk) {
			id := w.remember("client", w.admin(t, "POST", "/clients", map[string]any{"name": "Maria"}, 201))
			w.admin(t, "PATCH", "/clients/"+id, map[string]any{"notes": "prefers mornings"}, 200)
		}},
		{"lead capture", []string{"client.created", "task.created"}, func(t *testing.T, w *walk) {
			lc := w.public(t, "POST", "/leads", map[string]any{"name": "Lead", "phone": "+55 11 98888-7777"}, 201)
			w.remember("task", lc["task"].(map[string]any))
		}},
		{"dashboard task update and delete", []string{"task.updated", "task.deleted"}, func(t *testing.T, w *walk) {
			w.admin(t, "PATCH", "/tasks/"+w.ids["task"], map[string]any{"status": "in_progress"}, 200)
			w.admin(t, "DELETE", "/tasks/"+w.ids["task"], nil, 200)
		}},
		{"dashboard product", []string{"product.created", "stock.changed", "product.updated"}, func(t *testing.T, w *walk) {
			id := w.remember("product", w.admin(t, "POST", "/products",
				map[string]any{"name": "Cadeira", "sku": "CAD-1", "price_cents": 1000, "stock_quantity": 5}, 201))
			w.admin(t, "PATCH", "/products/"+id, map[string]any{"name": "Cadeira azul"}, 200)
		}},
		{"dashboard service", []string{"service.created", "service.updated", "service.deleted"}, func(t *testing.T, w *walk) {
			id := w.remember("service", w.admin(t, "POST", "/services", map[string]any{"name": "Instalação", "base_price_cents": 5000}, 201))
			w.admin(t, "PATCH", "/services/"+id, map[string]any{"base_price_cents": 6000}, 200)
			w.admin(t, "DELETE", "/services/"+id, nil, 200)
		}},
		{"sale with installments: payment, reversal, payment in full", []string{"sale.created", "sale.updated",
			"sale.payment_registered", "sale.payment_canceled", "sale.paid", "financial_transaction.created",
			"financial_transaction.updated"}, func(t *testing.T, w *walk) {
			w.admin(t, "POST", "/finance_accounts", map[string]any{"name": "Banco", "is_default": true}, 201)
			id := w.remember("sale", w.public(t, "POST", "/sales", map[string]any{"sale_date": "2026-01-01",
				"items": []map[string]any{{"type": "catalog", "product_id": w.ids["product"], "quantity": 1},
					{"type": "custom", "name": "Montagem", "unit_price_cents": 8000}},
				"payment_plan": map[string]any{"mode": "installments", "installments": []map[string]any{
					{"due_date": "2099-01-01", "amount_cents": 4500}, {"due_date": "2099-02-01", "amount_cents": 4500}}}}, 201))
			s := w.public(t, "POST", "/sales/"+id+"/payments", map[string]any{"amount_cents": 4500, "paid_at": "2026-01-05"}, 200)
			pays := s["payments"].([]any)
			pay := pays[len(pays)-1].(map[string]any)["id"].(string)
			w.public(t, "POST", "/sales/"+id+"/payments/"+pay+"/cancel", map[string]any{"reason": "bounced"}, 200)
			w.public(t, "POST", "/sales/"+id+"/payments", map[string]any{"amount_cents": 9000, "paid_at": "2026-01-06"}, 200)
		}},
		{"sale paid in full, then canceled", []string{"sale.canceled", "sale.payment_canceled"}, func(t *testing.T, w *walk) {
			id := w.public(t, "POST", "/sales", map[string]any{"sale_date": "2026-01-01",
				"items":        []map[string]any{{"type": "custom", "name": "Consultoria", "unit_price_cents": 3000}},
				"payment_plan": map[string]any{"mode": "paid_full", "payment_method": "pix", "paid_at": "2026-01-01"}}, 201)["id"].(string)
			w.public(t, "POST", "/sales/"+id+"/cancel", map[string]any{"reason": "client gave up"}, 200)
		}},
		{"service order: create, edit, complete with revenue", []string{"service_order.created", "service_order.updated",
			"service_order.status_changed", "financial_transaction.created"}, func(t *testing.T, w *walk) {
			id := w.remember("order", w.public(t, "POST", "/service_orders", map[string]any{"client_name": "Maria",
				"items": []map[string]any{{"description": "Visita", "quantity": 1, "unit_price_cents": 5000, "total_cents": 5000}}}, 201))
			w.public(t, "PATCH", "/service_orders/"+id, map[string]any{"internal_notes": "gate code 42"}, 200)
			w.public(t, "POST", "/service_orders/"+id+"/complete", map[string]any{"link_financial_transaction": true}, 200)
		}},
		{"revenue marked paid in finance", []string{"financial_transaction.updated", "financial_transaction.paid"}, func(t *testing.T, w *walk) {
			var entry string
			w.co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
				return tx.NewSelect().Table("financial_transactions").Column("id").Where("service_order_id = ?", w.ids["order"]).Scan(ctx, &entry)
			})
			w.admin(t, "POST", "/financial_transactions/"+entry+"/mark_paid", map[string]any{"payment_date": "2026-01-10"}, 200)
		}},
		{"manual entry deleted", []string{"financial_transaction.created", "financial_transaction.deleted"}, func(t *testing.T, w *walk) {
			id := w.admin(t, "POST", "/financial_transactions", map[string]any{"kind": "expense", "description": "Aluguel",
				"amount_cents": 150000, "due_date": "2026-02-05"}, 201)["id"].(string)
			w.admin(t, "DELETE", "/financial_transactions/"+id, nil, 200)
		}},
		{"service order deleted", []string{"service_order.deleted"}, func(t *testing.T, w *walk) {
			w.admin(t, "DELETE", "/service_orders/"+w.ids["order"], nil, 200)
		}},
		{"quote: create, edit, approve", []string{"quote.created", "quote.updated", "quote.status_changed"}, func(t *testing.T, w *walk) {
			id := w.remember("quote", w.admin(t, "POST", "/quotes", map[string]any{"client_name": "Maria",
				"items": []map[string]any{{"description": "Reforma", "quantity": 1, "unit_price_cents": 20000, "total_cents": 20000}}}, 201))
			w.admin(t, "PATCH", "/quotes/"+id, map[string]any{"notes": "valid for 30 days"}, 200)
			w.admin(t, "POST", "/quotes/"+id+"/status", map[string]any{"status": "approved"}, 200)
		}},
		{"quote expired when the list is opened, then deleted", []string{"quote.status_changed", "quote.deleted"}, func(t *testing.T, w *walk) {
			id := w.admin(t, "POST", "/quotes", map[string]any{"client_name": "Joana", "status": "sent",
				"valid_until": "2020-01-01T00:00:00Z"}, 201)["id"].(string)
			w.admin(t, "GET", "/quotes", nil, 200)
			w.admin(t, "DELETE", "/quotes/"+id, nil, 200)
		}},
		{"product and client deleted", []string{"product.deleted", "client.deleted"}, func(t *testing.T, w *walk) {
			w.admin(t, "DELETE", "/products/"+w.ids["product"], nil, 200)
			w.admin(t, "DELETE", "/clients/"+w.ids["client"], nil, 200)
		}},
		{"an endpoint disabled and enabled again", []string{"webhook_endpoint.disabled", "webhook_endpoint.enabled"}, func(t *testing.T, w *walk) {
			w.public(t, "POST", "/webhook_endpoints/"+w.ids["/troubled"]+"/disable", nil, 200)
			w.public(t, "POST", "/webhook_endpoints/"+w.ids["/troubled"]+"/enable", nil, 200)
		}},
		{"a receiver failing until its delivery is given up, then answering", []string{"webhook_endpoint.failing",
			"webhook_delivery.given_up", "webhook_endpoint.recovered"}, func(t *testing.T, w *walk) {
			w.troubled.Store(true)
			id := w.admin(t, "POST", "/clients", map[string]any{"name": "Troubled"}, 201)["id"].(string)
			testkit.Eventually(t, "the troubled endpoint's delivery to be given up", func() bool {
				var n int64
				w.co.Tx(t, func(ctx context.Context, tx bun.Tx) (err error) {
					n, err = tx.NewSelect().Table("webhook_deliveries").Where("endpoint_id = ?", w.ids["/troubled"]).
						Where("event_type = 'client.created'").Where("status = ?", streams.StatusFailed).Where("attempt_count > 0").Count(ctx)
					return err
				})
				return n > 0
			})
			w.troubled.Store(false)
			w.admin(t, "PATCH", "/clients/"+id, map[string]any{"notes": "answered"}, 200)
		}},
		{"a client certificate about to expire", []string{"webhook_endpoint.client_certificate_expiring"}, func(t *testing.T, w *walk) {
			cert, key, _ := testkit.ClientCertificate(t, "walk", time.Now().Add(7*24*time.Hour))
			w.public(t, "PATCH", "/webhook_endpoints/"+w.ids["/troubled"],
				map[string]any{"client_certificate": map[string]any{"certificate": cert, "private_key": key}}, 200)
			r := w.api.Admin(t, "POST", "/routines/warn_client_certificates", map[string]any{"company_id": w.co.Company.ID})
			if r.Status != 200 || r.Body["warned"] != float64(1) {
				t.Fatalf("the certificate routine: %d %s", r.Status, r.Raw)
			}
		}},
	}
}
