-- The sweeper works across companies but deletes under each company's
-- policy (idempotency.Sweep); this definer function only tells it which
-- companies have expired records. The workers' only: owned by
-- oficina_definer, pg_temp searched last.
CREATE OR REPLACE FUNCTION oficina_idempotency_expired(p_now timestamptz, p_limit integer) RETURNS SETOF text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$ SELECT DISTINCT company_id FROM (
          SELECT company_id FROM idempotency_records WHERE expires_at <= p_now LIMIT p_limit
        ) expired $$;

ALTER FUNCTION oficina_idempotency_expired(timestamptz, integer) OWNER TO oficina_definer;
REVOKE ALL ON FUNCTION oficina_idempotency_expired(timestamptz, integer) FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_idempotency_expired(timestamptz, integer) TO oficina_worker;
