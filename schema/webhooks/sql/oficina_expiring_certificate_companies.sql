-- Companies with an endpoint whose client certificate expires before
-- p_before and has not been warned about (webhooks' certificate warning):
-- the routine's one door through row-level security, answering company ids
-- only; each company's endpoints are then marked and their events recorded
-- under its own policy (streams.Writer). The workers' only: owned by
-- oficina_definer, pg_temp searched last.
CREATE OR REPLACE FUNCTION oficina_expiring_certificate_companies(p_before timestamptz) RETURNS SETOF text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT DISTINCT company_id FROM public.webhook_endpoints
   WHERE client_certificate_expires_at < p_before AND client_certificate_warned_at IS NULL
   ORDER BY company_id $$;

ALTER FUNCTION oficina_expiring_certificate_companies(timestamptz) OWNER TO oficina_definer;
REVOKE ALL ON FUNCTION oficina_expiring_certificate_companies(timestamptz) FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_expiring_certificate_companies(timestamptz) TO oficina_worker;
