-- Pipeline figures (issue 18, docs/operating.md "Metrics"): the dispatcher's
-- count of retries past due reads pending deliveries by next_attempt_at, so
-- a scrape costs one pass over this partial index even with a backlog. The
-- functions that read the figures live beside their callers (decision
-- 0020): streams/sql/oficina_outbox_lag.sql,
-- dispatch/sql/oficina_retries_past_due.sql, ops/mail/sql/oficina_mail_backlog.sql.
CREATE INDEX webhook_deliveries_retry_due ON webhook_deliveries (next_attempt_at)
  WHERE status = 'pending' AND next_attempt_at IS NOT NULL;
