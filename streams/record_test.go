package streams_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/streams"
	"oficina/streams/envelope"
	"oficina/streams/jsconfig"
)

// Spec 6.1 items 2-3: a delivery per enabled endpoint subscribed to the
// type (by name, by family wildcard or by "*") at the time of the write;
// disabled and unsubscribed endpoints get none; nothing is retroactive.
func TestDeliveriesOnlyForEnabledSubscribedEndpointsAtWriteTime(t *testing.T) {
	t.Parallel()
	co := newCompany(t)
	family := endpoint(t, co, true, "sale.*")
	all := endpoint(t, co, true, "*")
	exact := endpoint(t, co, true, "sale.paid")
	other := endpoint(t, co, true, "client.created")
	disabled := endpoint(t, co, false, "sale.paid")

	rs := record(t, co, write(co, streams.ActorAPI), streams.Change{Type: "sale.paid", Object: newSale("sal_1")})
	got := map[string]bool{}
	for _, d := range rs[0].Deliveries {
		got[d.EndpointID] = true
	}
	if len(got) != 3 || !got[family.ID] || !got[all.ID] || !got[exact.ID] || got[other.ID] || got[disabled.ID] {
		t.Fatalf("deliveries to %v; want family, all and exact only", got)
	}
	later := endpoint(t, co, true, "*")
	for _, d := range deliveries(t, co) {
		if d.EndpointID == later.ID {
			t.Fatal("a delivery was created retroactively")
		}
		if d.EventID != rs[0].ID || d.EventType != "sale.paid" || d.Status != streams.StatusPending || d.Kind != streams.KindEvent {
			t.Fatalf("delivery row %+v", d)
		}
	}
	if evs := outbox(t, co); len(evs) != 1 || !evs[0].HasDeliveries {
		t.Fatalf("outbox %+v", evs)
	}
}

// Decision 0037: an operational event (Change.About) goes to the endpoints
// naming it or its family, never through "*" and never to the endpoint it
// is about, which subscribes to it too; the business event of the same
// write still reaches every subscriber, "*" and the one it was about.
func TestAnOperationalEventSkipsStarAndTheEndpointItIsAbout(t *testing.T) {
	t.Parallel()
	co := newCompany(t)
	about := endpoint(t, co, true, "sale.*", "webhook_endpoint.*")
	all := endpoint(t, co, true, "*")
	family := endpoint(t, co, true, "webhook_endpoint.*")
	exact := endpoint(t, co, true, "webhook_endpoint.failing", "sale.paid")
	rs := record(t, co, write(co, streams.ActorSystem),
		streams.Change{Type: "webhook_endpoint.failing", Object: map[string]any{"object": "webhook_endpoint", "id": about.ID}, About: about.ID},
		streams.Change{Type: "sale.paid", Object: newSale("sal_op")})
	to := func(r streams.Recorded) []string {
		var out []string
		for _, d := range r.Deliveries {
			out = append(out, d.EndpointID)
		}
		slices.Sort(out)
		return out
	}
	want := []string{family.ID, exact.ID}
	slices.Sort(want)
	if got := to(rs[0]); !slices.Equal(got, want) {
		t.Errorf("the operational event went to %v, want %v (not %s about, nor %s on *)", got, want, about.ID, all.ID)
	}
	want = []string{about.ID, all.ID, exact.ID}
	slices.Sort(want)
	if got := to(rs[1]); !slices.Equal(got, want) {
		t.Errorf("sale.paid went to %v, want %v", got, want)
	}
	if b := body(t, rs[0].Body); b["data"].(map[string]any)["object_truncated"] != nil {
		t.Errorf("the system's event is summarized: %s", rs[0].Body)
	}
}

// Spec 6.1 item 2 next to DESIGN's firehose: an event nobody subscribed to
// has no delivery; it is published on the firehose and, the log being
// appended to only (decision 0029), kept like every event until its day is
// dropped (docs/events.md).
func TestEventWithoutSubscriberHasNoDeliveryAndIsKeptOncePublished(t *testing.T) {
	t.Parallel()
	co := newCompany(t)
	js := testkit.JetStream(t, jsconfig.Config{})
	endpoint(t, co, true, "client.created")
	rs := record(t, co, write(co, streams.ActorAPI), streams.Change{Type: "sale.created", Object: newSale("sal_2")})
	if len(rs) != 1 || len(rs[0].Deliveries) != 0 || len(deliveries(t, co)) != 0 {
		t.Fatalf("recorded %+v", rs)
	}
	if evs := outbox(t, co); len(evs) != 1 || evs[0].HasDeliveries {
		t.Fatalf("outbox %+v", evs)
	}
	if err := streams.NewPublisher(co.DB, js, nil).Publish(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	if evs := outbox(t, co); len(evs) != 1 || evs[0].ID != rs[0].ID {
		t.Fatalf("outbox after publish %+v, want the event kept", evs)
	}
	if got := co.Backlog(t); len(got) != 0 {
		t.Fatalf("backlog after publish %v, want none", got)
	}
	if n := stored(t, js, "EVENTS", "oficina.events."+co.Company.ID+".>"); n["oficina.events."+co.Company.ID+".sale.created"] != 1 {
		t.Fatalf("EVENTS holds %v", n)
	}
}

// Spec 6.2 and 6.3 rules 1-3: the envelope's fields; changed_fields sorted,
// without updated_at; a write that changes nothing yields no .updated; one
// write may yield several events sharing one list.
func TestEnvelopeAndChangedFieldsRules(t *testing.T) {
	t.Parallel()
	co := newCompany(t)
	before := newSale("sal_3")
	after := before
	after.Total, after.Notes, after.UpdatedAt = 2000, "rush", "2026-01-02T00:00:00Z"
	rs := record(t, co, write(co, streams.ActorAPI),
		streams.Change{Type: "sale.updated", Object: after, Before: before},
		streams.Change{Type: "sale.updated", Object: before, Before: before}, // nothing changed
		streams.Change{Type: "service_order.status_changed", Object: map[string]any{"object": "service_order", "id": "so_1", "status": "completed"}},
		streams.Change{Type: "service_order.updated", Object: map[string]any{"object": "service_order", "id": "so_1", "status": "completed"},
			ChangedFields: []string{"status", "description", "updated_at"}},
	)
	if len(rs) != 3 {
		t.Fatalf("%d events, want 3 (the no-change update is skipped)", len(rs))
	}
	upd := body(t, rs[0].Body)
	if !envelope.ValidEventID(upd["id"].(string)) || upd["type"] != "sale.updated" || upd["api_version"] != "v1" ||
		upd["organization_id"] != co.Company.ID || !strings.HasSuffix(upd["timestamp"].(string), "Z") {
		t.Fatalf("envelope %s", rs[0].Body)
	}
	data := upd["data"].(map[string]any)
	if fmt.Sprint(data["changed_fields"]) != "[notes total_cents]" || data["object"].(map[string]any)["total_cents"] != 2000.0 {
		t.Fatalf("data %v", data)
	}
	if _, ok := data["object_truncated"]; ok {
		t.Fatal("object_truncated present on a full object")
	}
	if d := body(t, rs[1].Body)["data"].(map[string]any); d["changed_fields"] != nil {
		t.Fatalf("changed_fields on a non-update event: %v", d)
	}
	if d := body(t, rs[2].Body)["data"].(map[string]any); fmt.Sprint(d["changed_fields"]) != "[description status]" {
		t.Fatalf("explicit list: %v", d["changed_fields"])
	}
	var stored []string
	for _, e := range outbox(t, co) {
		stored = append(stored, e.ID)
	}
	if !slices.Contains(stored, rs[0].ID) || len(stored) != 3 {
		t.Fatalf("outbox %v", stored)
	}
}

// Spec 6.3 rule 4: the body is capped at 256 KB; at exactly the cap the
// object is whole, one byte over it is summarized with object_truncated.
func TestBodyCapAtExactly256KB(t *testing.T) {
	t.Parallel()
	co := newCompany(t)
	obj := func(pad int) map[string]any {
		return map[string]any{"object": "client", "id": "cli_1", "notes": strings.Repeat("x", pad)}
	}
	probe := record(t, co, write(co, streams.ActorAPI), streams.Change{Type: "client.created", Object: obj(1000)})
	pad := 1000 + envelope.MaxBodyBytes - len(probe[0].Body)
	exact := record(t, co, write(co, streams.ActorAPI), streams.Change{Type: "client.created", Object: obj(pad)})
	if len(exact[0].Body) != envelope.MaxBodyBytes {
		t.Fatalf("body %d bytes, want %d", len(exact[0].Body), envelope.MaxBodyBytes)
	}
	if d := body(t, exact[0].Body)["data"].(map[string]any); d["object_truncated"] != nil || d["object"].(map[string]any)["notes"] == nil {
		t.Fatal("object summarized at exactly the cap")
	}
	over := record(t, co, write(co, streams.ActorAPI), streams.Change{Type: "client.created", Object: obj(pad + 1)})
	d := body(t, over[0].Body)["data"].(map[string]any)
	if d["object_truncated"] != true || fmt.Sprint(d["object"]) != "map[id:cli_1 object:client]" {
		t.Fatalf("one byte over: %s", over[0].Body[:200])
	}
}

// Spec 6.3 rule 5: writes by automations, the messaging assistant, bank
// import and routines are always summarized, with empty changed_fields;
// API and dashboard writes are not.
func TestSummarizedActors(t *testing.T) {
	t.Parallel()
	co := newCompany(t)
	before := newSale("sal_4")
	after := before
	after.Status = "paid"
	for _, tc := range []struct {
		kind       streams.ActorKind
		summarized bool
	}{
		{streams.ActorAutomation, true}, {streams.ActorAssistant, true}, {streams.ActorBankImport, true},
		{streams.ActorRoutine, true}, {streams.ActorAPI, false}, {streams.ActorDashboard, false},
	} {
		rs := record(t, co, write(co, tc.kind), streams.Change{Type: "sale.updated", Object: after, Before: before})
		d := body(t, rs[0].Body)["data"].(map[string]any)
		obj := d["object"].(map[string]any)
		if got := d["object_truncated"] == true && len(obj) == 2 && fmt.Sprint(d["changed_fields"]) == "[]"; got != tc.summarized {
			t.Errorf("%s: summarized=%v, want %v: %v", tc.kind, got, tc.summarized, d)
		}
	}
}

// A ping cannot be recorded as a write's event; it has its own path.
func TestPingIsNotAWriteEvent(t *testing.T) {
	t.Parallel()
	co := newCompany(t)
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		if _, err := streams.Record(ctx, writeIn(tx, co, streams.ActorAPI), streams.Change{Type: "ping", Object: newSale("x")}); err == nil {
			t.Error("ping recorded as a write event")
		}
		return nil
	})
}
