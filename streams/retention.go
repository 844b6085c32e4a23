package streams

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// DefaultRetention is how long events and the delivery log are kept (spec
// 6.6, part 8).
const DefaultRetention = 30 * 24 * time.Hour

// OutboxLag is what the outbox holds that is not on NATS yet, across
// every company (metrics: the relay's lag).
type OutboxLag struct {
	Events, Deliveries int64
	// Oldest is when the oldest of them was recorded; zero when none.
	Oldest time.Time
}

// ReadOutboxLag reads the outbox's lag through a definer function that
// answers counts only (the worker role's).
func ReadOutboxLag(ctx context.Context, db bun.IDB) (OutboxLag, error) {
	var row struct {
		Events     int64      `bun:"events"`
		Deliveries int64      `bun:"deliveries"`
		Oldest     *time.Time `bun:"oldest"`
	}
	if err := db.NewRaw("SELECT * FROM oficina_outbox_lag()").Scan(ctx, &row); err != nil {
		return OutboxLag{}, fmt.Errorf("streams: outbox lag: %w", err)
	}
	lag := OutboxLag{Events: row.Events, Deliveries: row.Deliveries}
	if row.Oldest != nil {
		lag.Oldest = *row.Oldest
	}
	return lag, nil
}
