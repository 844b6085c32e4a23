package streams_test

import (
	"context"
	"slices"
	"testing"

	"oficina/ops/testkit"
	"oficina/schema/ids"
	"oficina/streams"
	"oficina/streams/jsconfig"
)

// Spec 6.1 item 2: one delivery per enabled subscribed endpoint, however
// many the company has — also beyond the delivery ids made ahead of the
// recording statement.
func TestEverySubscribedEndpointGetsOneDeliveryBeyondTheIDPool(t *testing.T) {
	t.Parallel()
	co := newCompany(t)
	var want []string
	for range 7 {
		want = append(want, endpoint(t, co, true, "*").ID)
	}
	rs := record(t, co, write(co, streams.ActorAPI),
		streams.Change{Type: "sale.paid", Object: newSale("sal_p1")},
		streams.Change{Type: "sale.created", Object: newSale("sal_p2")})
	rows := map[string]streams.Delivery{}
	for _, d := range deliveries(t, co) {
		rows[d.ID] = d
	}
	if len(rows) != 2*len(want) {
		t.Fatalf("%d delivery rows, want %d", len(rows), 2*len(want))
	}
	for _, r := range rs {
		var got []string
		for _, d := range r.Deliveries {
			row, ok := rows[d.ID]
			if !ok || !ids.Valid(streams.DeliveryIDPrefix, d.ID) || row.EndpointID != d.EndpointID || row.EventID != r.ID ||
				row.EventType != r.Type || row.Kind != streams.KindEvent || row.Status != streams.StatusPending {
				t.Fatalf("recorded delivery %+v, row %+v", d, row)
			}
			got = append(got, d.EndpointID)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("%s delivered to %v, want %v", r.Type, got, want)
		}
	}
}

// DESIGN "a write, end to end" item 4, decision 0029: no row is marked
// published. A write no publisher vouches for puts what it recorded in the
// backlog; once JetStream has it, Publish takes it out, so the relay has
// nothing left to send, and the log's rows are as they were written.
func TestPublishTakesWhatItSentOutOfTheBacklog(t *testing.T) {
	t.Parallel()
	co := newCompany(t)
	js := testkit.JetStream(t, jsconfig.Config{})
	endpoint(t, co, true, "sale.*")
	rs := record(t, co, write(co, streams.ActorAPI),
		streams.Change{Type: "sale.created", Object: newSale("sal_m1")},
		streams.Change{Type: "client.created", Object: map[string]any{"object": "client", "id": "cli_m1"}})
	if len(rs) != 2 || len(rs[0].Deliveries) != 1 || len(rs[1].Deliveries) != 0 {
		t.Fatalf("recorded %+v", rs)
	}
	want := []string{rs[0].ID, rs[1].ID, rs[0].Deliveries[0].ID}
	slices.Sort(want)
	if got := co.Backlog(t); !slices.Equal(got, want) {
		t.Fatalf("backlog before publish %v, want %v", got, want)
	}
	if err := streams.NewPublisher(co.DB, js, nil).Publish(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	if got := co.Backlog(t); len(got) != 0 {
		t.Fatalf("backlog after publish %v, want none", got)
	}
	if evs := outbox(t, co); len(evs) != 2 {
		t.Fatalf("outbox after publish %+v, want both events kept", evs)
	}
	if ds := deliveries(t, co); len(ds) != 1 {
		t.Fatalf("deliveries after publish %+v", ds)
	}
	if got := stored(t, js, jsconfig.EventsStream, ">"); len(got) != 2 {
		t.Fatalf("EVENTS holds %v, want both events", got)
	}
}
