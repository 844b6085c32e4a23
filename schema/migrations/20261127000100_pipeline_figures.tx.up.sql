-- Pipeline figures (issue 18, docs/operating.md "Metrics"): what /metrics
-- reads from the database at scrape time, as the worker role. Like the
-- doors through row-level security they answer numbers only, never a row
-- or a company, and only to the worker role. Each is one pass over a
-- partial index, so a scrape costs little even with a backlog.

-- Scheduled retries: the dispatcher's count of retries past due reads
-- pending deliveries by next_attempt_at.
CREATE INDEX webhook_deliveries_retry_due ON webhook_deliveries (next_attempt_at)
  WHERE status = 'pending' AND next_attempt_at IS NOT NULL;

-- The outbox: events and deliveries not on NATS yet, and the oldest one's
-- creation time (NULL when there is none).
CREATE FUNCTION oficina_outbox_lag(OUT events bigint, OUT deliveries bigint, OUT oldest timestamptz)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT (SELECT count(*) FROM public.event_outbox WHERE published_at IS NULL),
         (SELECT count(*) FROM public.webhook_deliveries WHERE published_at IS NULL),
         LEAST((SELECT min(created_at) FROM public.event_outbox WHERE published_at IS NULL),
               (SELECT min(created_at) FROM public.webhook_deliveries WHERE published_at IS NULL)) $$;

-- Pending deliveries whose scheduled retry is due before p_now, and the
-- earliest such time.
CREATE FUNCTION oficina_retries_past_due(p_now timestamptz, OUT due bigint, OUT oldest timestamptz)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT count(*), min(next_attempt_at) FROM public.webhook_deliveries
   WHERE status = 'pending' AND next_attempt_at IS NOT NULL AND next_attempt_at < p_now $$;

-- Mail neither sent nor given up.
CREATE FUNCTION oficina_mail_backlog(OUT unsent bigint)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT count(*) FROM public.mail_outbox WHERE sent_at IS NULL AND failed_at IS NULL $$;

DO $$
DECLARE f text;
BEGIN
  FOREACH f IN ARRAY ARRAY['oficina_outbox_lag()', 'oficina_retries_past_due(timestamptz)', 'oficina_mail_backlog()'] LOOP
    EXECUTE format('ALTER FUNCTION %s OWNER TO oficina_definer', f);
    EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC, oficina_app', f);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO oficina_worker', f);
  END LOOP;
END $$;
