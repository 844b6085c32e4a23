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

// ExpiredCompanies asks the database which companies hold events or mail
// recorded before `before` (a cross-company question answered by a narrow
// definer function; each company is then purged in its own transaction).
func ExpiredCompanies(ctx context.Context, db bun.IDB, before time.Time, limit int) ([]string, error) {
	var out []string
	if err := db.NewRaw("SELECT oficina_expired_companies(?, ?)", before, limit).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("streams: expired companies: %w", err)
	}
	return out, nil
}

// PurgeCompany deletes the events of the transaction's company recorded
// before `before`; their deliveries and attempts go with them (ON DELETE
// CASCADE), which is the delivery log's retention too.
func PurgeCompany(ctx context.Context, tx bun.IDB, before time.Time) (int64, error) {
	res, err := tx.NewDelete().Model((*OutboxEvent)(nil)).Where("created_at < ?", before).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("streams: purge events: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

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
