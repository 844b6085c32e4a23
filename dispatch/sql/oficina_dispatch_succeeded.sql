-- Records 2xx attempts (dispatch's record stage), for parallel arrays (one
-- entry per attempt): the attempt rows with what was sent and got but the
-- body, which is the event's (only for deliveries that still exist), the deliveries (pending becomes succeeded; a
-- final delivery resent keeps its status), and clears the endpoints' failing
-- and access-lost marks. p_details holds each attempt's details as a JSON
-- object (request_headers, response_headers, response_body,
-- response_body_truncated, duration_ms):
-- they are written by the insert itself, not by a second update (issue 16).
-- What triggered an attempt is oficina_attempt_trigger's, from the
-- delivery's attempts before it; a succeeded attempt schedules nothing
-- (next_attempt_at stays NULL).
--
-- One round trip per batch whatever its companies, with plans the session
-- keeps. It runs as the caller (SECURITY INVOKER): each company's rows are
-- touched only after set_config('app.company_id', company, true), so
-- row-level security scopes every statement as in a request, and the
-- caller's transaction gets its company back at the end. The workers' only.
CREATE OR REPLACE FUNCTION oficina_dispatch_succeeded(p_companies text[], p_attempts text[], p_deliveries text[],
                                                      p_endpoints text[], p_started timestamptz[], p_codes integer[],
                                                      p_details text[], p_now timestamptz)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  caller text := current_setting('app.company_id', true);
  c text;
BEGIN
  FOR c IN SELECT DISTINCT x FROM unnest(p_companies) AS x ORDER BY x LOOP
    PERFORM set_config('app.company_id', c, true);
    INSERT INTO public.webhook_attempts
           (id, company_id, delivery_id, endpoint_id, started_at, finished_at, response_status_code, created_at,
            request_headers, response_headers, response_body, response_body_truncated, duration_ms, triggered_by)
    SELECT v.aid, d.company_id, d.id, d.endpoint_id, v.started, p_now, v.code, p_now,
           x.request_headers, x.response_headers, x.response_body, coalesce(x.response_body_truncated, false), x.duration_ms,
           public.oficina_attempt_trigger(d.kind, d.attempt_count)
      FROM unnest(p_companies, p_attempts, p_deliveries, p_started, p_codes, p_details)
             AS v(company, aid, id, started, code, detail)
      JOIN public.webhook_deliveries d ON d.id = v.id
      CROSS JOIN LATERAL jsonb_to_record(coalesce(v.detail, '{}')::jsonb)
             AS x(request_headers jsonb, response_headers jsonb, response_body text, response_body_truncated boolean,
                  duration_ms integer)
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
  PERFORM set_config('app.company_id', coalesce(caller, ''), true);
END $$;

REVOKE ALL ON FUNCTION oficina_dispatch_succeeded(text[], text[], text[], text[], timestamptz[], integer[], text[], timestamptz)
  FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_dispatch_succeeded(text[], text[], text[], text[], timestamptz[], integer[], text[], timestamptz)
  TO oficina_worker;
