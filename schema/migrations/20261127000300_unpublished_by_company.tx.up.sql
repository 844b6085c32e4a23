-- The relay reads one company's unpublished rows oldest first (streams'
-- relay): with the unpublished rows indexed by created_at alone it ANDed a
-- bitmap of that whole partial index (every company's backlog, and every
-- entry of a row published since the last vacuum: bitmap scans never mark
-- an entry dead) with the company's index, then sorted. Indexed by company
-- first, it is an ordered index scan that stops at its LIMIT and marks the
-- dead entries it passes. The cross-company questions (which companies have
-- work, the outbox lag) walk the same index (decision 0024).
DROP INDEX event_outbox_unpublished;
CREATE INDEX event_outbox_unpublished ON event_outbox (company_id, created_at) WHERE published_at IS NULL;
DROP INDEX webhook_deliveries_unpublished;
CREATE INDEX webhook_deliveries_unpublished ON webhook_deliveries (company_id, created_at) WHERE published_at IS NULL;
