-- What the dispatcher checks before sending (dispatch's store), for
-- parallel arrays of (company, delivery, endpoint): per company, its
-- deliveries' status, type and attempts so far (the retry schedule's
-- place), the endpoints, the plan, the subscribing keys and members (with
-- the keys' creators). A delivery to an endpoint whose ordering is 'object'
-- (decision 0039) also lists the deliveries of its object to that endpoint
-- recorded before it and still pending ("waits_on", nearest first): a
-- backwards walk along the object's order that stops at the first one no
-- longer pending (the pending ones are always the last of an object's
-- order, since none is sent before those before it are final), at most 64
-- steps; and "head_next_attempt_at", the next attempt of the earliest of
-- them, when the delivery may be asked again. Returns {company: view},
-- one key per company asked ("company" null when it does not exist); a
-- row counts for the company the input names only when it is that
-- company's.
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
                                                      'attempt_count', d.attempt_count, 'waits_on', w.ids,
                                                      'head_next_attempt_at', w.head_next)) AS j
      FROM public.webhook_deliveries d
      LEFT JOIN LATERAL (
        WITH RECURSIVE back (id, seq, status, next_at, n) AS (
          (SELECT p.id, p.order_seq, p.status, p.next_attempt_at, 1 FROM public.webhook_deliveries p
            WHERE d.order_key IS NOT NULL AND d.status = 'pending'
              AND EXISTS (SELECT 1 FROM e WHERE e.id = d.endpoint_id AND e.company_id = d.company_id AND e.ordering = 'object')
              AND p.company_id = d.company_id AND p.endpoint_id = d.endpoint_id AND p.order_key = d.order_key
              AND p.order_seq < d.order_seq
            ORDER BY p.order_seq DESC LIMIT 1)
          UNION ALL
          SELECT q.id, q.order_seq, q.status, q.next_attempt_at, b.n + 1 FROM back b CROSS JOIN LATERAL (
            SELECT p.id, p.order_seq, p.status, p.next_attempt_at FROM public.webhook_deliveries p
             WHERE p.company_id = d.company_id AND p.endpoint_id = d.endpoint_id AND p.order_key = d.order_key
               AND p.order_seq < b.seq
             ORDER BY p.order_seq DESC LIMIT 1) q
           WHERE b.status = 'pending' AND b.n < 64
        )
        SELECT jsonb_agg(b.id ORDER BY b.seq DESC) AS ids, (array_agg(b.next_at ORDER BY b.seq))[1] AS head_next
          FROM back b WHERE b.status = 'pending'
      ) w ON true
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
