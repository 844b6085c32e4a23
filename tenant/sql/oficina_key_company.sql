-- Authentication must find a key before the company is known (tenant's
-- key lookup). This definer function is the one door through row-level
-- security: it answers only which company owns a hash, and the rest of the
-- key is read under that company's policy. It belongs to oficina_definer
-- (NOLOGIN, no BYPASSRLS) and searches pg_temp last, so a temporary table
-- cannot stand in for api_keys.
CREATE OR REPLACE FUNCTION oficina_key_company(p_hash bytea) RETURNS text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$ SELECT company_id FROM api_keys WHERE secret_hash = p_hash $$;

ALTER FUNCTION oficina_key_company(bytea) OWNER TO oficina_definer;
REVOKE ALL ON FUNCTION oficina_key_company(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION oficina_key_company(bytea) TO oficina_app;
