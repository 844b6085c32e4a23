-- Companies with ids in publish_backlog recorded before p_before (the
-- relay). A door through row-level security for a cross-company worker: it
-- answers only which companies have work; the rows are then read and
-- deleted under each company's policy (tenant.Tx). The workers' only:
-- owned by oficina_definer, pg_temp searched last.
--
-- It skips from company to company along the primary key (company_id, id),
-- at most p_limit steps: one index probe per company with work.
CREATE OR REPLACE FUNCTION oficina_backlog_companies(p_before timestamptz, p_limit integer) RETURNS SETOF text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  WITH RECURSIVE c(company_id, n) AS (
    SELECT (SELECT b.company_id FROM publish_backlog b WHERE b.created_at < p_before ORDER BY b.company_id LIMIT 1), 1
    UNION ALL
    SELECT (SELECT b.company_id FROM publish_backlog b WHERE b.created_at < p_before AND b.company_id > c.company_id
             ORDER BY b.company_id LIMIT 1), c.n + 1
      FROM c WHERE c.company_id IS NOT NULL AND c.n < p_limit
  )
  SELECT company_id FROM c WHERE company_id IS NOT NULL $$;

ALTER FUNCTION oficina_backlog_companies(timestamptz, integer) OWNER TO oficina_definer;
REVOKE ALL ON FUNCTION oficina_backlog_companies(timestamptz, integer) FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_backlog_companies(timestamptz, integer) TO oficina_worker;
