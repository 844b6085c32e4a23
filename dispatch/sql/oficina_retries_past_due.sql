-- Scheduled retries for /metrics (issue 18): pending deliveries whose
-- retry was due before p_now, and the earliest such time. Numbers only;
-- the workers' only: owned by oficina_definer, pg_temp searched last.
CREATE OR REPLACE FUNCTION oficina_retries_past_due(p_now timestamptz, OUT due bigint, OUT oldest timestamptz)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT count(*), min(next_attempt_at) FROM public.webhook_deliveries
   WHERE status = 'pending' AND next_attempt_at IS NOT NULL AND next_attempt_at < p_now $$;

ALTER FUNCTION oficina_retries_past_due(timestamptz) OWNER TO oficina_definer;
REVOKE ALL ON FUNCTION oficina_retries_past_due(timestamptz) FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_retries_past_due(timestamptz) TO oficina_worker;
