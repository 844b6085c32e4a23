// Package migrate brings a database to this version of Oficina: the
// versioned migrations, then the SQL functions of every package that calls
// one (db.Migrate does both under one lock). It lists the owners, which the
// schema kernel may not import; every migrating command and test goes
// through Run.
package migrate

import (
	"context"
	"fmt"
	"time"

	"oficina/dispatch"
	"oficina/schema/db"
	"oficina/schema/idempotency"
	"oficina/schema/mail"
	"oficina/schema/numbering"
	"oficina/schema/orders"
	"oficina/schema/portal"
	"oficina/schema/products"
	"oficina/schema/sales"
	"oficina/schema/webhooks"
	"oficina/streams"
	"oficina/tenant"
)

// Functions returns the function sources of every package that owns SQL
// functions, lowest layer first, so a function may call one below it.
func Functions() []db.Functions {
	return []db.Functions{
		tenant.Functions(),
		streams.Functions(),
		numbering.Functions(),
		idempotency.Functions(),
		products.Functions(),
		sales.Functions(),
		orders.Functions(),
		portal.Functions(),
		mail.Functions(),
		webhooks.Functions(),
		dispatch.Functions(),
	}
}

// Run migrates the database of ownerURL, creating it when missing, then
// makes the log's day partitions around today (and files by day the rows
// an upgrade carried over), so writes find theirs before any sweeper runs.
// It drops nothing: retention is the sweeper's.
func Run(ctx context.Context, ownerURL string) (db.Applied, error) {
	applied, err := db.Migrate(ctx, ownerURL, Functions()...)
	if err != nil {
		return applied, err
	}
	owner, err := db.Open(ctx, ownerURL, db.Options{MaxOpenConns: 1})
	if err != nil {
		return applied, err
	}
	defer owner.Close()
	if _, err := streams.KeepLog(ctx, owner, time.Now(), streams.DefaultPartitionsAhead, 0); err != nil {
		return applied, fmt.Errorf("migrate: %w", err)
	}
	return applied, nil
}
