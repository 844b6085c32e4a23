-- Companies with events or deliveries left unpublished since before
-- p_before (the relay). A door through row-level security for a
-- cross-company worker: it answers only which companies have work; the
-- rows are then read and changed under each company's policy (tenant.Tx).
-- The workers' only: owned by oficina_definer, pg_temp searched last.
CREATE OR REPLACE FUNCTION oficina_unpublished_companies(p_before timestamptz, p_limit integer) RETURNS SETOF text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT company_id FROM (
    SELECT company_id FROM event_outbox WHERE published_at IS NULL AND created_at < p_before
    UNION
    SELECT company_id FROM webhook_deliveries WHERE published_at IS NULL AND created_at < p_before
  ) c LIMIT p_limit $$;

ALTER FUNCTION oficina_unpublished_companies(timestamptz, integer) OWNER TO oficina_definer;
REVOKE ALL ON FUNCTION oficina_unpublished_companies(timestamptz, integer) FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_unpublished_companies(timestamptz, integer) TO oficina_worker;
