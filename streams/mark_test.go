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

// DESIGN "a write, end to end" item 4: once JetStream has what a write
// recorded, the publisher marks all of it — events with deliveries keep
// their row (for resends) stamped published, firehose-only events leave,
// deliveries are stamped — so the relay has nothing left to send.
func TestPublishMarksEverythingItSent(t *testing.T) {
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
	if err := streams.NewPublisher(co.DB, js, nil).Publish(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	evs := outbox(t, co)
	if len(evs) != 1 || evs[0].ID != rs[0].ID || evs[0].PublishedAt == nil {
		t.Fatalf("outbox after publish %+v", evs)
	}
	ds := deliveries(t, co)
	if len(ds) != 1 || ds[0].PublishedAt == nil {
		t.Fatalf("deliveries after publish %+v", ds)
	}
}
