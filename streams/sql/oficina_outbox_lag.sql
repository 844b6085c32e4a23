-- The outbox for /metrics (issue 18): events and deliveries not on NATS yet,
-- and the oldest one's creation time (NULL when there is none). Numbers
-- only, never a row or a company; the workers' only: owned by
-- oficina_definer, pg_temp searched last.
CREATE OR REPLACE FUNCTION oficina_outbox_lag(OUT events bigint, OUT deliveries bigint, OUT oldest timestamptz)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT (SELECT count(*) FROM public.event_outbox WHERE published_at IS NULL),
         (SELECT count(*) FROM public.webhook_deliveries WHERE published_at IS NULL),
         LEAST((SELECT min(created_at) FROM public.event_outbox WHERE published_at IS NULL),
               (SELECT min(created_at) FROM public.webhook_deliveries WHERE published_at IS NULL)) $$;

ALTER FUNCTION oficina_outbox_lag() OWNER TO oficina_definer;
REVOKE ALL ON FUNCTION oficina_outbox_lag() FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_outbox_lag() TO oficina_worker;
