package sweep

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/mail"
	"oficina/streams"
)

// Log keeps the event and delivery log (events, deliveries, attempts)
// within retention (spec 6.6 and part 8: 30 days): it makes the day
// partitions ahead and drops those that ended before now - retention
// (decision 0027), a cost that does not grow with the rows. It returns the
// partitions dropped.
func Log(db bun.IDB, retention time.Duration) Task {
	if retention <= 0 {
		retention = streams.DefaultRetention
	}
	return Task{Name: "log", Sweep: func(ctx context.Context, now time.Time) (int, error) {
		up, err := streams.KeepLog(ctx, db, now, streams.DefaultPartitionsAhead, retention)
		return up.Dropped, err
	}}
}

// Mail deletes, company by company, the mail outbox's rows older than
// retention (kept as long as the events).
func Mail(db bun.IDB, retention time.Duration) Task {
	if retention <= 0 {
		retention = streams.DefaultRetention
	}
	list := func(ctx context.Context, db bun.IDB, now time.Time, limit int) ([]string, error) {
		return mail.ExpiredCompanies(ctx, db, now.Add(-retention), limit)
	}
	purge := func(ctx context.Context, tx bun.IDB, now time.Time) (int, error) {
		n, err := mail.PurgeCompany(ctx, tx, now.Add(-retention))
		return int(n), err
	}
	return PerCompany("mail", db, list, purge)
}
