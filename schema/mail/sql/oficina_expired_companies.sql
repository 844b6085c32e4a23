-- Companies with mail recorded before p_before (the sweeper's retention;
-- the event log expires by day partitions, oficina_log_partitions): a door
-- through row-level security that answers company ids only. The workers'
-- only: owned by oficina_definer, pg_temp searched last.
CREATE OR REPLACE FUNCTION oficina_expired_companies(p_before timestamptz, p_limit integer) RETURNS SETOF text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT DISTINCT company_id FROM mail_outbox WHERE created_at < p_before LIMIT p_limit $$;

ALTER FUNCTION oficina_expired_companies(timestamptz, integer) OWNER TO oficina_definer;
REVOKE ALL ON FUNCTION oficina_expired_companies(timestamptz, integer) FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_expired_companies(timestamptz, integer) TO oficina_worker;
