package jsconfig

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// Issue 15 item 5: EVENTS denies message delete and purge to every user,
// also when it existed before the rule (Ensure's update turns it on), and
// DELIVERIES denies message delete; its purge stays possible because
// message schedules need roll-ups, which the server refuses with
// DenyPurge (ops/natsauth grants the purge API to no Oficina process).
func TestEventsDeniesDeleteAndPurgeAlsoOnAnExistingStream(t *testing.T) {
	t.Parallel()
	ctx, js := startJS(t)
	cfg := DefaultConfig()
	old := eventsStream(cfg)
	old.DenyDelete, old.DenyPurge = false, false // as created before this rule
	if _, err := js.CreateStream(ctx, old); err != nil {
		t.Fatal(err)
	}
	oldDl := deliveriesStream(cfg)
	oldDl.DenyDelete = false
	if _, err := js.CreateStream(ctx, oldDl); err != nil {
		t.Fatal(err)
	}
	subj, _ := EventSubject("co_1", "sale.paid")
	ack, err := js.Publish(ctx, subj, []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Ensure(ctx, js, cfg); err != nil {
		t.Fatal(err)
	}

	ev, err := js.Stream(ctx, EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	if c := ev.CachedInfo().Config; !c.DenyDelete || !c.DenyPurge {
		t.Fatalf("EVENTS after Ensure: deny delete %v, deny purge %v", c.DenyDelete, c.DenyPurge)
	}
	if err := ev.DeleteMsg(ctx, ack.Sequence); err == nil {
		t.Error("EVENTS: a message was deleted")
	}
	if err := ev.Purge(ctx); err == nil {
		t.Error("EVENTS: purged")
	}
	if err := ev.Purge(ctx, jetstream.WithPurgeSubject(subj)); err == nil {
		t.Error("EVENTS: a subject was purged")
	}
	if info, err := ev.Info(ctx); err != nil || info.State.Msgs != 1 {
		t.Errorf("EVENTS holds %v messages (%v), want the 1 published", info.State.Msgs, err)
	}

	dl, err := js.Stream(ctx, DeliveriesStream)
	if err != nil {
		t.Fatal(err)
	}
	if c := dl.CachedInfo().Config; !c.DenyDelete || c.DenyPurge || !c.AllowRollup {
		t.Fatalf("DELIVERIES after Ensure: deny delete %v, deny purge %v, roll-ups %v", c.DenyDelete, c.DenyPurge, c.AllowRollup)
	}
	dsubj, _ := DeliverySubject("co_1", "we_1")
	dack, err := js.Publish(ctx, dsubj, []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if err := dl.DeleteMsg(ctx, dack.Sequence); err == nil {
		t.Error("DELIVERIES: a message was deleted")
	}

	// An update can never turn the denials back off.
	if _, err := js.UpdateStream(ctx, old); err == nil || errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Errorf("update cancelling deny delete/purge: %v", err)
	}
}
