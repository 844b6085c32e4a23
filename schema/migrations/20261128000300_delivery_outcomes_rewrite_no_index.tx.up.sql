-- A delivery's outcome is recorded by an update that PostgreSQL can make
-- HOT — in the same page, no index touched — when no indexed column
-- changes (issue 25 item 2). So no index of webhook_deliveries refers to
-- status or attempt_count, even in its predicate:
--   * the retries past due (metrics) are found among the rows with a
--     next attempt, which only a failure sets and the outcome clears;
--   * a recovery counts its waiting resends among its newest ones by id.
-- The log's day partitions leave room for those updates (fillfactor 85;
-- oficina_log_partitions makes new ones so).
DROP INDEX webhook_deliveries_retry_due;
CREATE INDEX webhook_deliveries_retry_due ON webhook_deliveries (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
DROP INDEX webhook_deliveries_recover_waiting;
CREATE INDEX webhook_deliveries_recover ON webhook_deliveries (recover_task_id, id) WHERE recover_task_id IS NOT NULL;

DO $$
DECLARE p regclass;
BEGIN
  FOR p IN SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'webhook_deliveries'::regclass LOOP
    EXECUTE format('ALTER TABLE %s SET (fillfactor = 85)', p);
  END LOOP;
END $$;
