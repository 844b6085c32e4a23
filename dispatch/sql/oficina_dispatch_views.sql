-- What the dispatcher checks before sending (dispatch's store), for
-- parallel arrays of (company, delivery, endpoint): per company, its
-- deliveries' status, type and attempts so far (the retry schedule's
-- place), the endpoints, the plan, the subscribing keys and members (with
-- the keys' creators). Returns {company: view}, one key per company asked
-- ("company" null when it does not exist); a row counts for the company
-- the input names only when it is that company's.
--
-- One statement for all the companies (decision 0031): the transaction is
-- scoped to them at once through app.company_ids, which the worker role's
-- worker_batch policies read, and cleared at the end, so row-level
-- security still limits every read to the companies asked. SECURITY
-- INVOKER, the workers' only.
CREATE OR REPLACE FUNCTION oficina_dispatch_views(p_companies text[], p_deliveries text[], p_endpoints text[])
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  caller text := current_setting('app.company_ids', true);
  result jsonb;
BEGIN
  PERFORM set_config('app.company_ids', array_to_string(ARRAY(SELECT DISTINCT x FROM unnest(p_companies) AS x ORDER BY x), ','), true);
  WITH r AS (
    SELECT * FROM unnest(p_companies, p_deliveries, p_endpoints) AS r(company, delivery, endpoint)
  ), e AS (
    SELECT e.* FROM public.webhook_endpoints e
     WHERE e.id = ANY (p_endpoints) AND EXISTS (SELECT 1 FROM r WHERE r.endpoint = e.id AND r.company = e.company_id)
  ), k AS (
    SELECT k.* FROM public.api_keys k WHERE (k.company_id, k.id) IN (SELECT company_id, subscriber_key_id FROM e)
  ), d AS (
    SELECT d.company_id, jsonb_agg(jsonb_build_object('id', d.id, 'status', d.status, 'event_type', d.event_type,
                                                      'attempt_count', d.attempt_count)) AS j
      FROM public.webhook_deliveries d
     WHERE d.id = ANY (p_deliveries) AND EXISTS (SELECT 1 FROM r WHERE r.delivery = d.id AND r.company = d.company_id)
     GROUP BY d.company_id
  ), ej AS (
    SELECT e.company_id, jsonb_agg(to_jsonb(e)) AS j FROM e GROUP BY e.company_id
  ), kj AS (
    SELECT k.company_id, jsonb_agg(to_jsonb(k) - 'secret_hash') AS j FROM k GROUP BY k.company_id
  ), mj AS (
    SELECT m.company_id, jsonb_agg(to_jsonb(m)) AS j FROM public.members m
     WHERE (m.company_id, m.id) IN (SELECT company_id, subscriber_member_id FROM e)
        OR (m.company_id, m.id) IN (SELECT company_id, created_by FROM k)
     GROUP BY m.company_id
  )
  SELECT coalesce(jsonb_object_agg(c.id, jsonb_build_object(
           'deliveries', coalesce(d.j, '[]'), 'endpoints', coalesce(ej.j, '[]'),
           'company', (SELECT jsonb_build_object('id', co.id, 'plan', co.plan, 'api_enabled', co.api_enabled)
                         FROM public.companies co WHERE co.id = c.id),
           'keys', coalesce(kj.j, '[]'), 'members', coalesce(mj.j, '[]'))), '{}')
    INTO result
    FROM (SELECT DISTINCT x AS id FROM unnest(p_companies) AS x) c
    LEFT JOIN d ON d.company_id = c.id LEFT JOIN ej ON ej.company_id = c.id
    LEFT JOIN kj ON kj.company_id = c.id LEFT JOIN mj ON mj.company_id = c.id;
  PERFORM set_config('app.company_ids', coalesce(caller, ''), true);
  RETURN result;
END $$;

REVOKE ALL ON FUNCTION oficina_dispatch_views(text[], text[], text[]) FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_dispatch_views(text[], text[], text[]) TO oficina_worker;
