package streams_test

import (
	"context"
	"testing"
	"time"

	"oficina/ops/testkit"
	"oficina/schema/db"
	"oficina/streams"
	"oficina/streams/jsconfig"
	"oficina/tenant"
)

// crashed tracks writes through a real publisher and then does what a
// process killed between commit and publish does: nothing.
type crashed struct{ *streams.Publisher }

func (crashed) AfterCommit(context.Context, streams.Ticket, []streams.Recorded) {}

// Decision 0029, DESIGN "a write, end to end" item 4: a publisher that dies
// between a commit and its publish loses nothing. Its writes left no mark
// and no backlog entry, but its beats stop; the relay then puts everything
// recorded since its last low watermark in the backlog and publishes it,
// and forgets the publisher. A publisher still beating is left alone. On a
// scratch database: the hand-over crosses every company.
func TestTheRelayRepublishesWhatALostPublisherLeft(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testkit.ScratchDB(t, "lost")
	app, worker := testkit.ScratchPools(t, url)
	owner, err := db.Open(ctx, url, db.Options{MaxOpenConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = owner.Close() })
	js := testkit.JetStream(t, jsconfig.Config{})
	co := testkit.NewCompanyIn(t, app, tenant.CompanyInput{})
	ep := endpoint(t, co, true, "client.*")

	live := running(t, streams.NewPublisher(app, js, nil))
	dying := streams.NewPublisher(app, js, nil)
	dying.StopWait = time.Millisecond
	// Its clock is an hour late: its last beat is long past for the relay.
	dying.Wall = func() time.Time { return time.Now().Add(-time.Hour) }
	stop, _ := testkit.Stoppable(t, "dying publisher", dying.Run)
	testkit.Eventually(t, "the dying publisher to vouch for writes", dying.Vouching)
	rs := tracked(t, co, crashed{dying}, streams.Change{Type: "client.created", Object: map[string]any{"object": "client", "id": "cli_lost"}})
	stop() // its write is still in flight: the row stays
	if got := co.Backlog(t); len(got) != 0 {
		t.Fatalf("backlog %v: a vouched-for write costs no entry", got)
	}

	relay := &streams.Relay{DB: worker, JS: js, MinAge: -1}
	if _, err := relay.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if n := stored(t, js, jsconfig.EventsStream, "oficina.events."+co.Company.ID+".>"); n["oficina.events."+co.Company.ID+".client.created"] != 1 {
		t.Fatalf("EVENTS %v, want the lost write's event", n)
	}
	if n := stored(t, js, jsconfig.DeliveriesStream, "oficina.dlv.*."+co.Company.ID+".>"); n[deliverySubject(co.Company.ID, ep.ID)] != 1 {
		t.Fatalf("DELIVERIES %v, want the lost write's delivery %s", n, rs[0].Deliveries[0].ID)
	}
	if got := co.Backlog(t); len(got) != 0 {
		t.Fatalf("backlog after the relay %v, want none", got)
	}
	var left []string
	if err := owner.NewRaw("SELECT id FROM publishers").Scan(ctx, &left); err != nil || len(left) != 1 || !live.Vouching() {
		t.Fatalf("publishers after the hand-over %v (%v), want the live one only", left, err)
	}
}
