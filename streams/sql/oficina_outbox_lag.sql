-- The outbox for /metrics (issue 18): events and deliveries whose publish
-- is not known to have succeeded (publish_backlog, decision 0029), and the
-- oldest one's creation time (NULL when there is none). Numbers only, never
-- a row or a company; the workers' only: owned by oficina_definer, pg_temp
-- searched last.
CREATE OR REPLACE FUNCTION oficina_outbox_lag(OUT events bigint, OUT deliveries bigint, OUT oldest timestamptz)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT count(*) FILTER (WHERE kind = 'event'), count(*) FILTER (WHERE kind = 'delivery'), min(created_at)
    FROM public.publish_backlog $$;

ALTER FUNCTION oficina_outbox_lag() OWNER TO oficina_definer;
REVOKE ALL ON FUNCTION oficina_outbox_lag() FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_outbox_lag() TO oficina_worker;
