// Package schema names what lives under schema/; it has no code.
//
// The kernel is the leaf packages every room may use, tenant and streams
// included: apierr (the error catalogue), apitime (timestamps and dates),
// db (the pools, the company transaction's settings, migrations and SQL
// functions), field (optional and nullable fields), ids (prefixed
// identifiers), migrations (the SQL migrations), page (cursors and lists),
// secretbox (sealed secrets), service (the base of long-lived services:
// logger, business clock, wall clock) and signing (webhook secrets and
// signatures).
// They import nothing of the module but each other.
//
// The modules are the records and rules of one concept each, above streams
// and tenant and below the dispatcher and the HTTP transport: appointments,
// clients, events (the event catalogue), finance, idempotency, leads, mail
// (the mail outbox), notify, numbering, orders, portal, products, quotes,
// sales, tasks and webhooks. A module may use the kernel, tenant, streams
// and other modules, never dispatch, http or ops.
//
// ops/layering's test holds the whole order (docs/decisions/0025-rooms.md).
// This package has no code and nothing imports it, so in Go the name
// schema always means bun's package (github.com/uptrace/bun/schema); the
// same test keeps it so.
package schema
