package sweep_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/sweep"
	"oficina/ops/testkit"
	"oficina/schema/ids"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// Issue 25 / spec 6.6: forty days of the log on the business clock. Each
// day a write records an event with its delivery, the delivery gets an
// attempt, and the sweeper runs. At the end nothing is older than the
// retention and the one day a partition spans, every day within the
// retention is still there, each row sits in its own day's partition, and
// what went was dropped as whole partitions (none of it lingers in a
// DEFAULT partition). A scratch database: dropping days of a clock 40 days
// ahead would drop the shared database's today.
func TestFortyDaysOfTheLogKeepThirtyByDroppingWholeDays(t *testing.T) {
	t.Parallel()
	const retention = 30 * 24 * time.Hour
	ctx := context.Background()
	url := testkit.ScratchDB(t, "log40")
	app, worker := testkit.ScratchPools(t, url)
	co := testkit.NewCompanyIn(t, app, tenant.CompanyInput{})
	clk := testkit.NewClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	var ep *webhooks.Row
	co.Tx(t, func(ctx context.Context, tx bun.Tx) (err error) {
		ep, err = webhooks.Create(ctx, tx, co.Company.ID, webhooks.WebhookEndpointCreate{URL: "https://hooks.example.com/", Events: []webhooks.EventName{"*"}},
			webhooks.Subscriber{MemberID: co.Owner.ID}, func([]string) error { return nil }, testkit.AnyURL{}, testkit.Keyring(t), clk.Now())
		return err
	})
	task := sweep.Log(worker, retention)
	dropped := 0
	for range 40 {
		w := &streams.Write{CompanyID: co.Company.ID, Actor: streams.Actor{Kind: streams.ActorAPI}, At: clk.Now(), Wall: clk.Now}
		co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
			w.Tx = tx
			rs, err := streams.Record(ctx, w, streams.Change{Type: "client.created", Object: map[string]any{"object": "client", "id": "cli_1"}})
			if err != nil {
				return err
			}
			if len(rs) != 1 || len(rs[0].Deliveries) != 1 {
				return fmt.Errorf("recorded %+v, want one event with one delivery", rs)
			}
			at := clk.Now().Add(time.Minute)
			_, err = tx.NewInsert().Model(&streams.Attempt{ID: ids.New("wha"), CompanyID: co.Company.ID, DeliveryID: rs[0].Deliveries[0].ID,
				EndpointID: ep.ID, StartedAt: at, FinishedAt: &at, CreatedAt: at}).Exec(ctx)
			return err
		})
		n, err := task.Sweep(ctx, clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		dropped += n
		clk.Advance(24 * time.Hour)
	}
	n, err := task.Sweep(ctx, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	dropped += n
	now := clk.Now() // 2026-02-10 12:00: days up to 2026-01-10 ended before the cutoff
	if dropped != 3*11 {
		t.Errorf("dropped %d partitions, want 33 (2025-12-31, made as yesterday, to 2026-01-10, of three tables)", dropped)
	}

	type row struct {
		Part string    `bun:"part"`
		At   time.Time `bun:"at"`
	}
	for table, at := range map[string]string{"event_outbox": "created_at", "webhook_deliveries": "created_at", "webhook_attempts": "started_at"} {
		var rows []row
		co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
			return tx.NewRaw(fmt.Sprintf("SELECT tableoid::regclass::text AS part, %s AS at FROM %s ORDER BY 2", at, table)).Scan(ctx, &rows)
		})
		if len(rows) != 30 {
			t.Errorf("%s: %d rows kept, want the 30 days within the retention", table, len(rows))
		}
		for _, r := range rows {
			if age := now.Sub(r.At); age > retention+24*time.Hour {
				t.Errorf("%s: a row of %s is %v old, past the retention and the day a partition spans", table, r.At, age)
			}
			if want := table + "_p" + r.At.UTC().Format("20060102"); r.Part != want {
				t.Errorf("%s: the row of %s is in %s, want %s", table, r.At, r.Part, want)
			}
		}
	}
	var parts []string
	if err := worker.NewRaw(`SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent::regclass::text IN ('event_outbox', 'webhook_deliveries', 'webhook_attempts') ORDER BY 1`).Scan(ctx, &parts); err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		if strings.Contains(p, "_p2025") || strings.Contains(p, "_p202601") && p[len(p)-2:] < "11" {
			t.Errorf("partition %s outlived the retention", p)
		}
	}
	for _, want := range []string{"event_outbox_p20260111", "webhook_deliveries_p20260213", "webhook_attempts_p20260209"} {
		if !strings.Contains(strings.Join(parts, " "), want) {
			t.Errorf("partition %s missing: %v", want, parts)
		}
	}
}
