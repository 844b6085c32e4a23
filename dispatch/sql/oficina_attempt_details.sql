-- Writes the details of attempts just recorded in the caller's transaction
-- (dispatch/attemptlog.go), for parallel entries of p_details (a JSON array
-- of objects: company, delivery, started, request_headers,
-- response_headers, response_body, response_body_truncated, duration_ms;
-- the body sent is the event's, kept once). An attempt is found by its
-- delivery and start time (a delivery has one attempt at a time); trigger
-- and next_attempt_at are read from the delivery as the record left it.
-- Like the dispatcher's other batch functions it scopes each company's rows
-- with set_config and gives the caller's transaction its company back. The
-- workers' only.
CREATE OR REPLACE FUNCTION oficina_attempt_details(p_details jsonb)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  caller text := current_setting('app.company_id', true);
  c text;
BEGIN
  FOR c IN SELECT DISTINCT x->>'company' FROM jsonb_array_elements(p_details) AS x ORDER BY 1 LOOP
    PERFORM set_config('app.company_id', c, true);
    UPDATE public.webhook_attempts AS a SET
           request_headers = v.request_headers,
           response_headers = v.response_headers, response_body = v.response_body,
           response_body_truncated = coalesce(v.response_body_truncated, false),
           duration_ms = v.duration_ms,
           triggered_by = public.oficina_attempt_trigger(d.kind, d.attempt_count - 1), -- the record counted it already
           next_attempt_at = CASE WHEN d.status = 'pending' THEN d.next_attempt_at END
      FROM jsonb_to_recordset(p_details) AS v(company text, delivery text, started timestamptz,
             request_headers jsonb, response_headers jsonb, response_body text, response_body_truncated boolean, duration_ms integer)
      JOIN public.webhook_deliveries d ON d.id = v.delivery
     WHERE v.company = c AND a.delivery_id = v.delivery AND a.started_at = v.started;
  END LOOP;
  PERFORM set_config('app.company_id', coalesce(caller, ''), true);
END $$;

REVOKE ALL ON FUNCTION oficina_attempt_details(jsonb) FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_attempt_details(jsonb) TO oficina_worker;
