package streams

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// DefaultPartitionsAhead is how many days of log partitions are made ahead
// of today, so a write never waits for one to be made (the maintainer runs
// far more often than daily).
const DefaultPartitionsAhead = 3

// LogUpkeep is what one upkeep of the log's partitions did.
type LogUpkeep struct {
	Created, Dropped int
	Moved            int64 // rows moved out of a DEFAULT partition into their day
}

// KeepLog makes the log's day partitions around now and ahead days ahead
// (and of any day whose rows wait in a DEFAULT partition) and, when
// retention is positive, drops every day partition that ended before
// now - retention (decision 0027): retention by dropping whole days, at a
// cost that does not grow with the rows. The log then keeps between
// retention and retention + 1 day. Several processes may call it at once.
func KeepLog(ctx context.Context, db bun.IDB, now time.Time, ahead int, retention time.Duration) (LogUpkeep, error) {
	var out LogUpkeep
	var ret any // NULL: drop nothing
	if retention > 0 {
		ret = fmt.Sprintf("%d microseconds", retention.Microseconds())
	}
	err := db.NewRaw("SELECT created, dropped, moved FROM oficina_log_partitions(?, ?, ?::interval)", now.UTC(), ahead, ret).
		Scan(ctx, &out.Created, &out.Dropped, &out.Moved)
	if err != nil {
		return out, fmt.Errorf("streams: log partitions: %w", err)
	}
	return out, nil
}
