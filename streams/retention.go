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
