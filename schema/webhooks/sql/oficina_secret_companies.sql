-- Companies with endpoints whose secrets are not sealed under p_key_id,
-- after p_after in id order (webhooks' sealing): the door of the start-up
-- step (p_key_id NULL: rows not sealed at all) and of `oficina admin secrets
-- rekey` (p_key_id the ring's first key: every row under another key, or
-- none). Like the other doors it answers company ids only, to the worker
-- role only; the rows are then read and re-sealed under each company's
-- policy (tenant.Tx). Owned by oficina_definer, pg_temp searched last.
CREATE OR REPLACE FUNCTION oficina_secret_companies(p_key_id text, p_after text, p_limit integer) RETURNS SETOF text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT DISTINCT company_id FROM public.webhook_endpoints
   WHERE (secret_key_id IS NULL OR secret_key_id <> p_key_id) AND company_id > p_after
   ORDER BY company_id LIMIT p_limit $$;

ALTER FUNCTION oficina_secret_companies(text, text, integer) OWNER TO oficina_definer;
REVOKE ALL ON FUNCTION oficina_secret_companies(text, text, integer) FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_secret_companies(text, text, integer) TO oficina_worker;
