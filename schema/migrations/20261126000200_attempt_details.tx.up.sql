-- What an attempt sent and got, for the delivery log of the portal (issue
-- 18): the request headers as sent (the signature, never the secret) and
-- its body, the response status, headers and body, each body capped at
-- 4 KiB (the *_truncated flags say when more was cut), the duration, what
-- triggered it (automatic: the write or a retry; manual: a resend, a
-- recovery or a ping) and when the next attempt was scheduled after it.
-- Written by the dispatcher right after it records the attempt
-- (dispatch/attemptlog.go); attempts made before this migration have none.
ALTER TABLE webhook_attempts
  ADD COLUMN request_headers          jsonb,
  ADD COLUMN request_body             text,
  ADD COLUMN request_body_truncated   boolean NOT NULL DEFAULT false,
  ADD COLUMN response_headers         jsonb,
  ADD COLUMN response_body            text,
  ADD COLUMN response_body_truncated  boolean NOT NULL DEFAULT false,
  ADD COLUMN duration_ms              integer,
  ADD COLUMN triggered_by             text CHECK (triggered_by IN ('automatic', 'manual')),
  ADD COLUMN next_attempt_at          timestamptz;

-- Endpoint health over a recent window reads attempts by endpoint and time.
CREATE INDEX webhook_attempts_endpoint_started ON webhook_attempts (company_id, endpoint_id, started_at);

-- Writes the details of attempts just recorded in the caller's transaction,
-- for parallel entries of p_details (a JSON array of objects: company,
-- delivery, started, request_headers, request_body, request_body_truncated,
-- response_headers, response_body, response_body_truncated, duration_ms).
-- An attempt is found by its delivery and start time (a delivery has one
-- attempt at a time); trigger and next_attempt_at are read from the
-- delivery as the record left it. Like the dispatcher's other batch
-- functions it scopes each company's rows with set_config and gives the
-- caller's transaction its company back.
CREATE FUNCTION oficina_attempt_details(p_details jsonb)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  caller text := current_setting('app.company_id', true);
  c text;
BEGIN
  FOR c IN SELECT DISTINCT x->>'company' FROM jsonb_array_elements(p_details) AS x ORDER BY 1 LOOP
    PERFORM set_config('app.company_id', c, true);
    UPDATE public.webhook_attempts AS a SET
           request_headers = v.request_headers, request_body = v.request_body,
           request_body_truncated = coalesce(v.request_body_truncated, false),
           response_headers = v.response_headers, response_body = v.response_body,
           response_body_truncated = coalesce(v.response_body_truncated, false),
           duration_ms = v.duration_ms,
           triggered_by = CASE WHEN d.kind <> 'event' AND d.attempt_count = 1 THEN 'manual' ELSE 'automatic' END,
           next_attempt_at = CASE WHEN d.status = 'pending' THEN d.next_attempt_at END
      FROM jsonb_to_recordset(p_details) AS v(company text, delivery text, started timestamptz,
             request_headers jsonb, request_body text, request_body_truncated boolean,
             response_headers jsonb, response_body text, response_body_truncated boolean, duration_ms integer)
      JOIN public.webhook_deliveries d ON d.id = v.delivery
     WHERE v.company = c AND a.delivery_id = v.delivery AND a.started_at = v.started;
  END LOOP;
  PERFORM set_config('app.company_id', coalesce(caller, ''), true);
END $$;

REVOKE ALL ON FUNCTION oficina_attempt_details(jsonb) FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_attempt_details(jsonb) TO oficina_worker;
