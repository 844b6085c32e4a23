package sweep_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/sweep"
	"oficina/ops/testkit"
	"oficina/schema/mail"
	"oficina/schema/service"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// Spec 6.6 / part 8: events and the delivery log (and mail) are kept 30
// days, then deleted. The clock is injected; rows are dated relative to it.
// The log goes by whole days (decision 0027): an event 29 days old is kept,
// one past 31 days is gone with its delivery; mail goes at 30 days.
func TestEventsDeliveryLogAndMailAreDeletedAfter30Days(t *testing.T) {
	t.Parallel()
	db := testkit.WorkerDB(t) // the sweeper is a worker
	now := time.Now().UTC().Truncate(time.Second)
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		_, err := webhooks.Create(ctx, tx, co.Company.ID, webhooks.WebhookEndpointCreate{URL: "https://hooks.example.com/", Events: []webhooks.EventName{"*"}},
			webhooks.Subscriber{MemberID: co.Owner.ID}, func([]string) error { return nil }, testkit.AnyURL{}, testkit.Keyring(t), now)
		return err
	})
	var kept, old string
	for _, age := range []time.Duration{29 * 24 * time.Hour, 31*24*time.Hour + time.Second} {
		// The write's wall clock dates the event and its delivery.
		w := &streams.Write{CompanyID: co.Company.ID, Actor: streams.Actor{Kind: streams.ActorAPI}, At: now,
			Wall: func() time.Time { return now.Add(-age) }}
		co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
			w.Tx = tx
			rs, err := streams.Record(ctx, w, streams.Change{Type: "client.created", Object: map[string]any{"object": "client", "id": "cli_1"}})
			if err != nil {
				return err
			}
			_, err = mail.Enqueue(ctx, tx, co.Company.ID, "test", []string{"a@example.com"}, "s", "b", now.Add(-age))
			if age < 30*24*time.Hour {
				kept = rs[0].ID
			} else {
				old = rs[0].ID
			}
			return err
		})
	}
	r := &sweep.Runner{Base: service.Base{Now: func() time.Time { return now }}, Tasks: []sweep.Task{sweep.Log(db, 30*24*time.Hour), sweep.Mail(db, 30*24*time.Hour)}}
	if err := r.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		var evs []string
		if err := tx.NewSelect().Model((*streams.OutboxEvent)(nil)).Column("id").Scan(ctx, &evs); err != nil {
			return err
		}
		var dls []string
		if err := tx.NewSelect().Model((*streams.Delivery)(nil)).Column("event_id").Scan(ctx, &dls); err != nil {
			return err
		}
		ms, err := mail.List(ctx, tx, 10)
		if len(evs) != 1 || evs[0] != kept || len(dls) != 1 || dls[0] != kept || len(ms) != 1 {
			t.Errorf("after the sweep: events %v (old %s), deliveries of %v, %d mails", evs, old, dls, len(ms))
		}
		return err
	})
}
