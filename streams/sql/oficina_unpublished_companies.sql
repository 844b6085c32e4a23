-- Companies with events or deliveries left unpublished since before
-- p_before (the relay). A door through row-level security for a
-- cross-company worker: it answers only which companies have work; the
-- rows are then read and changed under each company's policy (tenant.Tx).
-- The workers' only: owned by oficina_definer, pg_temp searched last.
--
-- Each side skips from company to company along the partial index of
-- unpublished rows (company_id, created_at), at most p_limit steps, so the
-- answer costs one index probe per company with work, not a pass over the
-- whole backlog.
CREATE OR REPLACE FUNCTION oficina_unpublished_companies(p_before timestamptz, p_limit integer) RETURNS SETOF text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  WITH RECURSIVE e(company_id, n) AS (
    SELECT (SELECT o.company_id FROM event_outbox o WHERE o.published_at IS NULL AND o.created_at < p_before
             ORDER BY o.company_id LIMIT 1), 1
    UNION ALL
    SELECT (SELECT o.company_id FROM event_outbox o WHERE o.published_at IS NULL AND o.created_at < p_before
               AND o.company_id > e.company_id ORDER BY o.company_id LIMIT 1), e.n + 1
      FROM e WHERE e.company_id IS NOT NULL AND e.n < p_limit
  ), d(company_id, n) AS (
    SELECT (SELECT w.company_id FROM webhook_deliveries w WHERE w.published_at IS NULL AND w.created_at < p_before
             ORDER BY w.company_id LIMIT 1), 1
    UNION ALL
    SELECT (SELECT w.company_id FROM webhook_deliveries w WHERE w.published_at IS NULL AND w.created_at < p_before
               AND w.company_id > d.company_id ORDER BY w.company_id LIMIT 1), d.n + 1
      FROM d WHERE d.company_id IS NOT NULL AND d.n < p_limit
  )
  SELECT company_id FROM (SELECT company_id FROM e UNION SELECT company_id FROM d) c
   WHERE company_id IS NOT NULL LIMIT p_limit $$;

ALTER FUNCTION oficina_unpublished_companies(timestamptz, integer) OWNER TO oficina_definer;
REVOKE ALL ON FUNCTION oficina_unpublished_companies(timestamptz, integer) FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_unpublished_companies(timestamptz, integer) TO oficina_worker;
