package streams_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"oficina/ops/testkit"
	"oficina/streams"
	"oficina/streams/jsconfig"
)

// connectJS connects to url (reconnecting forever, quickly) and ensures
// Oficina's streams.
func connectJS(t *testing.T, url string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := jsconfig.Ensure(context.Background(), js, jsconfig.Config{}); err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// Issue 15 item 6: a NATS that accepts messages but does not acknowledge
// them does not hold the write: the write returns while the
// acknowledgements are still outstanding, and they are awaited in the
// background once NATS answers. Acknowledged, they cost the database
// nothing: no mark, no backlog (decision 0029).
func TestAfterCommitDoesNotWaitForAnAcknowledgement(t *testing.T) {
	t.Parallel()
	co := newCompany(t)
	ns := testkit.NATS(t)
	proxy := testkit.NewProxy(t, strings.TrimPrefix(ns.ClientURL(), "nats://"))
	_, js := connectJS(t, "nats://"+proxy.Addr())
	endpoint(t, co, true, "client.*")
	pub := running(t, streams.NewPublisher(co.DB, js, nil))
	proxy.Pause()
	tracked(t, co, pub, streams.Change{Type: "client.created", Object: map[string]any{"object": "client", "id": "cli_hung"}})
	// Nothing can have been acknowledged: the proxy holds every byte.
	if n := js.PublishAsyncPending(); n != 2 {
		t.Fatalf("%d publishes outstanding when the write answered, want its 2 (event and delivery)", n)
	}
	proxy.Restore()
	pub.Wait()
	if n := stored(t, js, jsconfig.EventsStream, ">"); len(n) != 1 {
		t.Fatalf("EVENTS %v, want the event", n)
	}
	if got := co.Backlog(t); len(got) != 0 {
		t.Fatalf("backlog %v, want none: JetStream acknowledged everything", got)
	}
}

// Issue 15 item 6: while NATS is down a write sends nothing (not even into
// the client's reconnect buffer) and answers at once; its rows stay
// unpublished, and the relay publishes them once NATS is back. The
// publisher's and the relay's hooks (metrics) are told so.
func TestAfterCommitWhileNATSIsDownLeavesTheRowsToTheRelay(t *testing.T) {
	t.Parallel()
	co := newCompany(t)
	ns := testkit.NewRestartableNATS(t)
	nc, js := connectJS(t, ns.URL())
	ep := endpoint(t, co, true, "client.*")
	pub := streams.NewPublisher(co.DB, js, nil)
	var failed []string
	pub.Failed = func(reason string) { failed = append(failed, reason) }
	running(t, pub)
	ns.Stop()
	testkit.Eventually(t, "the client to see NATS gone", func() bool { return !nc.IsConnected() })
	rs := tracked(t, co, pub, streams.Change{Type: "client.created", Object: map[string]any{"object": "client", "id": "cli_down"}})
	if n := js.PublishAsyncPending(); n != 0 {
		t.Fatalf("%d publishes attempted while NATS was down, want none", n)
	}
	if len(failed) != 1 || failed[0] != streams.PublishDisconnected {
		t.Fatalf("publisher's hook told %v, want one %s", failed, streams.PublishDisconnected)
	}
	pub.Wait()
	want := []string{rs[0].ID, rs[0].Deliveries[0].ID}
	slices.Sort(want)
	if got := co.Backlog(t); !slices.Equal(got, want) {
		t.Fatalf("backlog %v, want the event and its delivery %v", got, want)
	}
	ns.Start(t)
	testkit.Eventually(t, "the client to reconnect", nc.IsConnected)
	published := make(chan int, 100)
	relay := &streams.Relay{DB: co.DB, JS: js, MinAge: -1, Interval: 20 * time.Millisecond, Only: []string{co.Company.ID},
		Ran: func(n int, err error) {
			if err == nil {
				published <- n
			}
		}}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- relay.Run(ctx) }()
	testkit.Eventually(t, "the relay to tell it published the rows", func() bool {
		select {
		case n := <-published:
			return n == 2
		case <-time.After(time.Second):
			return false
		}
	})
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := stored(t, js, "DELIVERIES", "oficina.dlv.*."+co.Company.ID+".>"); n[deliverySubject(co.Company.ID, ep.ID)] != 1 {
		t.Fatalf("DELIVERIES %v", n)
	}
	if got := co.Backlog(t); len(got) != 0 {
		t.Fatalf("backlog after the relay %v, want none", got)
	}
}
