// Package migrate brings a database to this version of Oficina: the
// versioned migrations, then the SQL functions of every package that calls
// one (db.Migrate does both under one lock). It lists the owners, which the
// schema kernel may not import; every migrating command and test goes
// through Run.
package migrate

import (
	"context"

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

// Run migrates the database of ownerURL, creating it when missing.
func Run(ctx context.Context, ownerURL string) (db.Applied, error) {
	return db.Migrate(ctx, ownerURL, Functions()...)
}
