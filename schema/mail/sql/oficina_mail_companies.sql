-- Companies with mail due at p_now (the mail sender): a door through
-- row-level security that answers company ids only. The workers' only:
-- owned by oficina_definer, pg_temp searched last.
CREATE OR REPLACE FUNCTION oficina_mail_companies(p_now timestamptz, p_limit integer) RETURNS SETOF text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT DISTINCT company_id FROM mail_outbox
   WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= p_now
   LIMIT p_limit $$;

ALTER FUNCTION oficina_mail_companies(timestamptz, integer) OWNER TO oficina_definer;
REVOKE ALL ON FUNCTION oficina_mail_companies(timestamptz, integer) FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_mail_companies(timestamptz, integer) TO oficina_worker;
