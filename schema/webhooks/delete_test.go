package webhooks_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/schema/ids"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// Spec 4.1 (DELETE /webhook_endpoints/{id}) with decision 0032: an
// endpoint is deleted with its delivery log — its deliveries and their
// attempts — although the log has no foreign key to cascade; another
// endpoint's log and the company's events stay.
func TestDeletingAnEndpointDeletesItsLogAndNothingElse(t *testing.T) {
	t.Parallel()
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	ring := testkit.Keyring(t)
	gone, kept := newEndpoint(t, co, ring), newEndpoint(t, co, ring)
	now := time.Now().UTC()
	var logged []testkit.LoggedDelivery
	for _, ep := range []*webhooks.Row{gone, kept} {
		d := co.LogDelivery(t, ep.ID, "client.created", streams.StatusFailed, now)
		logged = append(logged, d)
		co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
			_, err := tx.NewInsert().Model(&streams.Attempt{ID: ids.New("wha"), CompanyID: co.Company.ID, DeliveryID: d.DeliveryID,
				EndpointID: ep.ID, StartedAt: now, CreatedAt: now}).Exec(ctx)
			return err
		})
	}
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		_, err := webhooks.Delete(ctx, tx, gone.ID)
		return err
	})
	count := func(table, endpointID string) int {
		var n int
		co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
			return tx.NewSelect().TableExpr(table).ColumnExpr("count(*)").Where("endpoint_id = ?", endpointID).Scan(ctx, &n)
		})
		return n
	}
	for _, tt := range []struct {
		table, endpoint string
		want            int
	}{
		{"webhook_deliveries", gone.ID, 0}, {"webhook_attempts", gone.ID, 0},
		{"webhook_deliveries", kept.ID, 1}, {"webhook_attempts", kept.ID, 1},
	} {
		if got := count(tt.table, tt.endpoint); got != tt.want {
			t.Errorf("%s of endpoint %s: %d rows, want %d", tt.table, tt.endpoint, got, tt.want)
		}
	}
	var events int
	co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewSelect().TableExpr("event_outbox").ColumnExpr("count(*)").
			Where("id IN (?, ?)", logged[0].EventID, logged[1].EventID).Scan(ctx, &events)
	})
	if events != 2 {
		t.Errorf("%d of the 2 events left, want both: events are the company's, not an endpoint's", events)
	}
}
