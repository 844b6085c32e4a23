-- The dispatcher's batched reads and writes (dispatch/store.go) as PL/pgSQL
-- functions: one round trip per batch whatever the number of companies in
-- it, and plans kept for the session (the simple protocol re-plans every
-- bare statement). They run as the caller (SECURITY INVOKER): each company's
-- rows are touched only after set_config('app.company_id', company, true),
-- so row-level security scopes every statement as in a request. They leave
-- the setting at the last company; the caller sets it again before any
-- statement of its own.

-- What the dispatcher checks before sending, for parallel arrays of
-- (company, delivery, endpoint): per company, its deliveries' status and
-- type, the endpoints, the plan, the subscribing keys and members (with the
-- keys' creators). Returns {company: view}.
CREATE FUNCTION oficina_dispatch_views(p_companies text[], p_deliveries text[], p_endpoints text[])
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  c text;
  v jsonb;
  result jsonb := '{}';
BEGIN
  FOR c IN SELECT DISTINCT x FROM unnest(p_companies) AS x ORDER BY x LOOP
    PERFORM set_config('app.company_id', c, true);
    WITH r AS (
      SELECT r.delivery, r.endpoint FROM unnest(p_companies, p_deliveries, p_endpoints) AS r(company, delivery, endpoint)
       WHERE r.company = c
    ), e AS (
      SELECT * FROM public.webhook_endpoints WHERE id IN (SELECT endpoint FROM r)
    ), k AS (
      SELECT * FROM public.api_keys WHERE id IN (SELECT subscriber_key_id FROM e)
    )
    SELECT jsonb_build_object(
      'deliveries', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', d.id, 'status', d.status, 'event_type', d.event_type)), '[]')
                       FROM public.webhook_deliveries d WHERE d.id IN (SELECT delivery FROM r)),
      'endpoints', (SELECT coalesce(jsonb_agg(to_jsonb(e)), '[]') FROM e),
      'company', (SELECT jsonb_build_object('id', co.id, 'plan', co.plan, 'api_enabled', co.api_enabled)
                    FROM public.companies co WHERE co.id = c),
      'keys', (SELECT coalesce(jsonb_agg(to_jsonb(k) - 'secret_hash'), '[]') FROM k),
      'members', (SELECT coalesce(jsonb_agg(to_jsonb(m)), '[]') FROM public.members m
                   WHERE m.id IN (SELECT subscriber_member_id FROM e) OR m.id IN (SELECT created_by FROM k)))
    INTO v;
    result := result || jsonb_build_object(c, v);
  END LOOP;
  RETURN result;
END $$;

-- Records 2xx attempts, for parallel arrays (one entry per attempt): the
-- attempt rows (only for deliveries that still exist), the deliveries
-- (pending becomes succeeded; a final delivery resent keeps its status),
-- and clears the endpoints' failing and access-lost marks.
CREATE FUNCTION oficina_dispatch_succeeded(p_companies text[], p_attempts text[], p_deliveries text[],
                                           p_endpoints text[], p_started timestamptz[], p_codes integer[],
                                           p_now timestamptz)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  c text;
BEGIN
  FOR c IN SELECT DISTINCT x FROM unnest(p_companies) AS x ORDER BY x LOOP
    PERFORM set_config('app.company_id', c, true);
    INSERT INTO public.webhook_attempts
           (id, company_id, delivery_id, endpoint_id, started_at, finished_at, response_status_code, created_at)
    SELECT v.aid, d.company_id, d.id, d.endpoint_id, v.started, p_now, v.code, p_now
      FROM unnest(p_companies, p_attempts, p_deliveries, p_started, p_codes) AS v(company, aid, id, started, code)
      JOIN public.webhook_deliveries d ON d.id = v.id
     WHERE v.company = c;
    UPDATE public.webhook_deliveries AS d SET
           status = CASE WHEN d.status = 'pending' THEN 'succeeded' ELSE d.status END,
           completed_at = CASE WHEN d.status = 'pending' THEN p_now ELSE d.completed_at END,
           next_attempt_at = CASE WHEN d.status = 'pending' THEN NULL ELSE d.next_attempt_at END,
           attempt_count = d.attempt_count + 1, last_attempt_at = v.started,
           response_status_code = v.code, error = NULL, updated_at = p_now
      FROM unnest(p_companies, p_deliveries, p_started, p_codes) AS v(company, id, started, code)
     WHERE d.id = v.id AND v.company = c;
    UPDATE public.webhook_endpoints SET failing_since = NULL, access_lost_notified_at = NULL
     WHERE id IN (SELECT u.e FROM unnest(p_companies, p_endpoints) AS u(company, e) WHERE u.company = c)
       AND (failing_since IS NOT NULL OR access_lost_notified_at IS NOT NULL);
  END LOOP;
END $$;
