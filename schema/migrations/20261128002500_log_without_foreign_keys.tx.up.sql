-- The delivery log carries no foreign keys (decision 0032). Each one cost
-- every row appended a referential check: a query and a FOR KEY SHARE lock
-- on the company's row (and the endpoint's), which concurrent writes of one
-- company turn into multixacts: 0.80-0.90 ms of PostgreSQL CPU per event
-- and delivery recorded by 16 clients of one company, 0.61-0.68 ms without.
-- company_id is held by row-level security's WITH CHECK (the write's
-- company) and companies are never deleted; an endpoint's log is deleted
-- with it by webhooks.Delete, in its transaction.
ALTER TABLE event_outbox DROP CONSTRAINT IF EXISTS event_outbox_new_company_id_fkey;
ALTER TABLE webhook_deliveries DROP CONSTRAINT IF EXISTS webhook_deliveries_new_company_id_fkey;
ALTER TABLE webhook_deliveries DROP CONSTRAINT IF EXISTS webhook_deliveries_new_company_id_endpoint_id_fkey;
ALTER TABLE webhook_attempts DROP CONSTRAINT IF EXISTS webhook_attempts_new_company_id_fkey;
ALTER TABLE webhook_attempts DROP CONSTRAINT IF EXISTS webhook_attempts_new_company_id_endpoint_id_fkey;
