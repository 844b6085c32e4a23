package dispatch_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"oficina/ops/testkit"
	"oficina/schema/ids"
	"oficina/schema/webhooks"
	"oficina/tenant"
)

// Issue 25 item 2: a delivery's success is recorded by an update that
// rewrites no index entry (HOT): no index of the log refers to a column the
// outcome changes, and the day's partition leaves room in the page. Read
// from PostgreSQL's own counts for the transaction that recorded it.
func TestASuccessIsRecordedWithoutRewritingAnIndex(t *testing.T) {
	t.Parallel()
	co := company(t, tenant.PlanSupra)
	ep := newEndpoint(t, co, "https://hooks.example.com/", webhooks.Subscriber{MemberID: co.Owner.ID})
	dm := recordDelivery(t, co, ep, "sale.paid")
	ctx := context.Background()
	err := testkit.WorkerDB(t).RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := tenant.Scope(ctx, tx, co.Company.ID); err != nil {
			return err
		}
		var part string
		if err := tx.NewRaw("SELECT tableoid::regclass::text FROM webhook_deliveries WHERE id = ?", dm.DeliveryID).Scan(ctx, &part); err != nil {
			return err
		}
		// The transaction's counts may hold those of the connection's
		// earlier transactions not yet reported: what counts is the change.
		counts := func() (updated, hot int, err error) {
			err = tx.NewRaw("SELECT pg_stat_get_xact_tuples_updated(?::regclass), pg_stat_get_xact_tuples_hot_updated(?::regclass)",
				part, part).Scan(ctx, &updated, &hot)
			return updated, hot, err
		}
		u0, h0, err := counts()
		if err != nil {
			return err
		}
		now := time.Now()
		if _, err := tx.ExecContext(ctx, "SELECT oficina_dispatch_record(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '72 hours')",
			pgdialect.Array([]string{co.Company.ID}), pgdialect.Array([]string{ep.ID}), pgdialect.Array([]string{dm.DeliveryID}),
			pgdialect.Array([]string{"succeeded"}), pgdialect.Array([]string{ids.New("wha")}), pgdialect.Array([]time.Time{now}),
			pgdialect.Array([]int{200}), pgdialect.Array([]*string{nil}), pgdialect.Array([]string{"{}"}),
			pgdialect.Array([]*time.Time{nil}), pgdialect.Array([]*string{nil}), now); err != nil {
			return err
		}
		u1, h1, err := counts()
		if err != nil {
			return err
		}
		if u1-u0 != 1 || h1-h0 != 1 {
			t.Errorf("%s: the success updated %d rows, %d of them HOT; want 1 and 1", part, u1-u0, h1-h0)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
