package sweep

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/mail"
	"oficina/streams"
)

// Events deletes, company by company, what is older than retention (spec
// 6.6 and part 8: 30 days): events together with their deliveries and
// attempts (the delivery log, by ON DELETE CASCADE), and the mail outbox.
func Events(db bun.IDB, retention time.Duration) Task {
	if retention <= 0 {
		retention = streams.DefaultRetention
	}
	list := func(ctx context.Context, db bun.IDB, now time.Time, limit int) ([]string, error) {
		return streams.ExpiredCompanies(ctx, db, now.Add(-retention), limit)
	}
	purge := func(ctx context.Context, tx bun.IDB, now time.Time) (int, error) {
		before := now.Add(-retention)
		events, err := streams.PurgeCompany(ctx, tx, before)
		if err != nil {
			return 0, err
		}
		mails, err := mail.PurgeCompany(ctx, tx, before)
		return int(events + mails), err
	}
	return PerCompany("events", db, list, purge)
}
