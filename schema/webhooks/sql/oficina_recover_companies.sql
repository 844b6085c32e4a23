-- The recovery worker's door: which companies have a running task. Like
-- the other doors it answers company ids only, to the worker role only;
-- the tasks are then advanced under each company's policy. Owned by
-- oficina_definer, pg_temp searched last.
CREATE OR REPLACE FUNCTION oficina_recover_companies(p_limit integer) RETURNS SETOF text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT DISTINCT company_id FROM public.webhook_recover_tasks WHERE status = 'running' ORDER BY 1 LIMIT p_limit $$;

ALTER FUNCTION oficina_recover_companies(integer) OWNER TO oficina_definer;
REVOKE ALL ON FUNCTION oficina_recover_companies(integer) FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_recover_companies(integer) TO oficina_worker;
