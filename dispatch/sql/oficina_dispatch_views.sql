-- What the dispatcher checks before sending (dispatch's store), for
-- parallel arrays of (company, delivery, endpoint): per company, its
-- deliveries' status, type and attempts so far (the retry schedule's
-- place), the endpoints, the plan, the subscribing
-- keys and members (with the keys' creators). Returns {company: view}.
--
-- One round trip per batch whatever its companies, with plans the session
-- keeps. It runs as the caller (SECURITY INVOKER): each company's rows are
-- read only after set_config('app.company_id', company, true), so row-level
-- security scopes every statement as in a request, and the caller's
-- transaction gets its company back at the end. The workers' only.
CREATE OR REPLACE FUNCTION oficina_dispatch_views(p_companies text[], p_deliveries text[], p_endpoints text[])
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  caller text := current_setting('app.company_id', true);
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
      'deliveries', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', d.id, 'status', d.status, 'event_type', d.event_type,
                                                                   'attempt_count', d.attempt_count)), '[]')
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
  PERFORM set_config('app.company_id', coalesce(caller, ''), true);
  RETURN result;
END $$;

REVOKE ALL ON FUNCTION oficina_dispatch_views(text[], text[], text[]) FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_dispatch_views(text[], text[], text[]) TO oficina_worker;
