package streams_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/streams"
	"oficina/streams/jsconfig"
)

func deliverySubject(co, ep string) string {
	return fmt.Sprintf("oficina.dlv.%d.%s.%s", jsconfig.PartitionOf(co, jsconfig.DefaultConfig().Partitions), co, ep)
}

// DESIGN "A write, end to end" 4: every event goes to EVENTS and every
// delivery to DELIVERIES with Nats-Msg-Id = event / delivery id, so
// publishing the same rows again stores nothing twice.
func TestRepublishIsDroppedByJetStreamDedup(t *testing.T) {
	t.Parallel()
	co := newCompany(t)
	js := testkit.JetStream(t, jsconfig.Config{})
	ep := endpoint(t, co, true, "sale.*")
	rs := record(t, co, write(co, streams.ActorAPI), streams.Change{Type: "sale.created", Object: newSale("sal_5")})
	pub := streams.NewPublisher(co.DB, js, nil)
	for range 3 {
		if err := pub.Publish(context.Background(), rs); err != nil {
			t.Fatal(err)
		}
	}
	if n := stored(t, js, "EVENTS", "oficina.events."+co.Company.ID+".>"); n["oficina.events."+co.Company.ID+".sale.created"] != 1 {
		t.Fatalf("EVENTS %v", n)
	}
	if n := stored(t, js, "DELIVERIES", "oficina.dlv.*."+co.Company.ID+".>"); n[deliverySubject(co.Company.ID, ep.ID)] != 1 {
		t.Fatalf("DELIVERIES %v", n)
	}
	if got := co.Backlog(t); len(got) != 0 {
		t.Fatalf("backlog after publish %v, want none", got)
	}
}

// The DELIVERIES message carries what the dispatcher needs: the exact
// webhook body and, in headers, delivery, endpoint, company, event and kind.
func TestDeliveryMessageCarriesTheDispatchersFields(t *testing.T) {
	t.Parallel()
	co := newCompany(t)
	js := testkit.JetStream(t, jsconfig.Config{})
	ep := endpoint(t, co, true, "*")
	rs := record(t, co, write(co, streams.ActorAPI), streams.Change{Type: "sale.paid", Object: newSale("sal_6")})
	if err := streams.NewPublisher(co.DB, js, nil).Publish(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	s, _ := js.Stream(context.Background(), "DELIVERIES")
	raw, err := s.GetLastMsgForSubject(context.Background(), deliverySubject(co.Company.ID, ep.ID))
	if err != nil {
		t.Fatal(err)
	}
	m, err := streams.ParseDeliveryMessage(raw.Header, raw.Data)
	if err != nil {
		t.Fatal(err)
	}
	want := streams.DeliveryMessage{DeliveryID: rs[0].Deliveries[0].ID, EndpointID: ep.ID, CompanyID: co.Company.ID,
		EventID: rs[0].ID, EventType: "sale.paid", Kind: streams.KindEvent}
	if m.DeliveryID != want.DeliveryID || m.EndpointID != want.EndpointID || m.CompanyID != want.CompanyID ||
		m.EventID != want.EventID || m.EventType != want.EventType || m.Kind != want.Kind || string(m.Body) != string(rs[0].Body) {
		t.Fatalf("got %+v", m)
	}
	if raw.Header.Get(jetstream.MsgIDHeader) != m.DeliveryID {
		t.Fatalf("Nats-Msg-Id %q", raw.Header.Get(jetstream.MsgIDHeader))
	}
}

// DESIGN 4: a crash between commit and publish loses nothing: the relay
// finds the rows (across companies, each in its own transaction) and
// publishes them; a second round has nothing to do.
func TestRelayRecoversAnEventWhosePublishWasLost(t *testing.T) {
	t.Parallel()
	co := newCompany(t)
	js := testkit.JetStream(t, jsconfig.Config{})
	ep := endpoint(t, co, true, "client.*")
	rs := record(t, co, write(co, streams.ActorAPI), streams.Change{Type: "client.created", Object: map[string]any{"object": "client", "id": "cli_7"}})
	relay := &streams.Relay{DB: testkit.WorkerDB(t), JS: js, Only: []string{co.Company.ID}}
	// Young rows are left to the API's own publish.
	if _, err := relay.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := stored(t, js, "EVENTS", "oficina.events."+co.Company.ID+".>"); len(n) != 0 {
		t.Fatalf("relay published a row younger than MinAge: %v", n)
	}
	relay.Wall = func() time.Time { return time.Now().Add(time.Minute) } // the rows age on the wall clock
	if _, err := relay.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := stored(t, js, "EVENTS", "oficina.events."+co.Company.ID+".>"); n["oficina.events."+co.Company.ID+".client.created"] != 1 {
		t.Fatalf("EVENTS %v", n)
	}
	if n := stored(t, js, "DELIVERIES", "oficina.dlv.*."+co.Company.ID+".>"); n[deliverySubject(co.Company.ID, ep.ID)] != 1 {
		t.Fatalf("DELIVERIES %v", n)
	}
	if got := co.Backlog(t); len(got) != 0 {
		t.Fatalf("backlog after the relay %v, want none", got)
	}
	// Publishing what the relay already sent is dropped (the API's own
	// publish racing the relay).
	if err := streams.NewPublisher(co.DB, js, nil).Publish(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	if n := stored(t, js, "EVENTS", "oficina.events."+co.Company.ID+".>"); n["oficina.events."+co.Company.ID+".client.created"] != 1 {
		t.Fatalf("EVENTS after a racing publish %v", n)
	}
}

// Spec 6.2: a ping is a real event (evt_ id, type ping, data.object
// {object: ping, webhook_endpoint_id}) delivered to that endpoint only and
// never on the EVENTS firehose.
func TestPingGoesToItsEndpointOnly(t *testing.T) {
	t.Parallel()
	co := newCompany(t)
	js := testkit.JetStream(t, jsconfig.Config{})
	ep := endpoint(t, co, true, "*")
	other := endpoint(t, co, true, "*")
	var r streams.Recorded
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var err error
		r, err = streams.Ping(ctx, writeIn(tx, co, streams.ActorAPI), ep.ID)
		return err
	})
	if err := streams.NewPublisher(co.DB, js, nil).Publish(context.Background(), []streams.Recorded{r}); err != nil {
		t.Fatal(err)
	}
	b := body(t, r.Body)
	obj := b["data"].(map[string]any)["object"].(map[string]any)
	if b["type"] != "ping" || obj["object"] != "ping" || obj["webhook_endpoint_id"] != ep.ID || len(obj) != 2 {
		t.Fatalf("ping %s", r.Body)
	}
	if n := stored(t, js, "EVENTS", ">"); len(n) != 0 {
		t.Fatalf("ping on EVENTS: %v", n)
	}
	n := stored(t, js, "DELIVERIES", "oficina.dlv.*."+co.Company.ID+".>")
	if n[deliverySubject(co.Company.ID, ep.ID)] != 1 || n[deliverySubject(co.Company.ID, other.ID)] != 0 {
		t.Fatalf("DELIVERIES %v", n)
	}
	if d := deliveries(t, co); len(d) != 1 || d[0].Kind != streams.KindPing || d[0].EventType != "ping" {
		t.Fatalf("deliveries %+v", d)
	}
}

// `oficina events tail`: a company's events as they arrive, filtered by
// type with wildcards; other companies' events never show. Messages come in
// stream order, so an event wrongly let through would arrive first.
func TestTailFollowsOneCompanysEvents(t *testing.T) {
	t.Parallel()
	co, other := newCompany(t), newCompany(t)
	js := testkit.JetStream(t, jsconfig.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got := make(chan string, 10)
	done := make(chan error, 1)
	go func() {
		done <- streams.Tail(ctx, js, streams.TailOptions{CompanyID: co.Company.ID, Type: "sale.*", Since: time.Hour},
			func(_ string, raw []byte) error {
				b := body(t, raw)
				got <- b["organization_id"].(string) + " " + b["type"].(string)
				return nil
			})
	}()
	pub := streams.NewPublisher(co.DB, js, nil)
	publish := func(c *testkit.Company, typ string) {
		if err := pub.Publish(ctx, record(t, c, write(c, streams.ActorAPI), streams.Change{Type: typ, Object: newSale("sal_9")})); err != nil {
			t.Fatal(err)
		}
	}
	publish(co, "client.created")
	publish(other, "sale.paid")
	publish(co, "sale.paid")
	select {
	case ev := <-got:
		if ev != co.Company.ID+" sale.paid" {
			t.Fatalf("tail printed %s first", ev)
		}
	case <-ctx.Done():
		t.Fatal("tail printed nothing")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestTailFilter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ typ, want string }{
		{"", "oficina.events.co_1.>"}, {"*", "oficina.events.co_1.>"}, {"sale.*", "oficina.events.co_1.sale.*"},
		{"sale.paid", "oficina.events.co_1.sale.paid"}, {"*.updated", "oficina.events.co_1.*.updated"},
	} {
		got, err := streams.TailFilter(streams.TailOptions{CompanyID: "co_1", Type: tc.typ})
		if err != nil || got != tc.want {
			t.Errorf("%q: %q %v", tc.typ, got, err)
		}
	}
	for _, bad := range []streams.TailOptions{{CompanyID: "co.1"}, {CompanyID: ""}, {CompanyID: "co_1", Type: "Sale.*"}, {CompanyID: "co_1", Type: "sale..paid"}, {CompanyID: "co_1", Type: ">.paid"}} {
		if _, err := streams.TailFilter(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// DESIGN Tenancy: cross-company workers learn only which companies have
// work, through narrow definer functions, then touch rows inside that
// company's transaction.
func TestWorkersFindCompaniesWithWork(t *testing.T) {
	t.Parallel()
	co := newCompany(t)
	record(t, co, write(co, streams.ActorAPI), streams.Change{Type: "sale.created", Object: newSale("sal_10")})
	ctx := context.Background()
	const all = 1 << 30
	soon, past := time.Now().Add(time.Minute), time.Now().Add(-time.Minute)
	for name, find := range map[string]func(time.Time) ([]string, error){
		"backlog": func(b time.Time) ([]string, error) {
			return streams.BacklogCompanies(ctx, testkit.WorkerDB(t), b, all)
		},
	} {
		later, err := find(soon)
		if err != nil {
			t.Fatal(err)
		}
		earlier, err := find(past)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(later, co.Company.ID) || slices.Contains(earlier, co.Company.ID) {
			t.Errorf("%s: company found %v before its rows existed, or not found after", name, slices.Contains(earlier, co.Company.ID))
		}
	}
}

// With NATS unreachable the publish after commit gives up at once (the
// write is not held up) and the rows stay for the relay.
func TestPublishWhileNATSIsDownLeavesRowsToTheRelay(t *testing.T) {
	t.Parallel()
	co := newCompany(t)
	ns := testkit.NATS(t)
	down := make(chan struct{})
	nc, err := ns.Connect(nats.DisconnectErrHandler(func(*nats.Conn, error) { close(down) }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ns.Shutdown()
	<-down
	rs := record(t, co, write(co, streams.ActorAPI), streams.Change{Type: "sale.created", Object: newSale("sal_11")})
	if err := streams.NewPublisher(co.DB, js, nil).Publish(context.Background(), rs); !errors.Is(err, streams.ErrDisconnected) {
		t.Fatalf("publish: %v", err)
	}
	if got := co.Backlog(t); len(got) != 1 || got[0] != rs[0].ID {
		t.Fatalf("backlog %v, want the event", got)
	}
}
