-- The portal's door (portal.Open): which company a link or session hash
-- belongs to, before the company is known; the session itself is then read
-- under that company's policy (tenant.Tx). Owned by oficina_definer,
-- pg_temp searched last.
CREATE OR REPLACE FUNCTION oficina_portal_company(p_hash bytea) RETURNS text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT company_id FROM public.portal_sessions WHERE link_hash = p_hash OR session_hash = p_hash LIMIT 1 $$;

ALTER FUNCTION oficina_portal_company(bytea) OWNER TO oficina_definer;
REVOKE ALL ON FUNCTION oficina_portal_company(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION oficina_portal_company(bytea) TO oficina_app;
