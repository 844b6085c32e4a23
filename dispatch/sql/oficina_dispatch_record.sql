-- Records every outcome of one dispatcher cycle (dispatch's record stage):
-- the one place an attempt, a delivery's new state and an endpoint's health
-- are written, whatever the outcome and the companies. Parallel arrays, one
-- entry per outcome, sorted by company and delivery:
--   p_outcomes  'succeeded' (a 2xx answer), 'failed' (any other answer or
--               none: a status, a timeout, a refused destination, a TLS
--               error, a secret that does not open; p_errors says which), or
--               a delivery closed without an attempt, the reason being its
--               error: 'endpoint_disabled', 'plan_without_api',
--               'subscriber_access_lost';
--   p_attempts, p_started, p_codes, p_errors, p_details  the attempt (new id,
--               start, answer's status, reason without one, and a JSON object
--               of what it sent and got: request_headers, response_headers,
--               response_body, response_body_truncated, duration_ms); NULL
--               for a close;
--   p_retry_at  for a failure, when its next attempt is due (the schedule,
--               Retry-After and jitter are the dispatcher's); NULL when the
--               attempts are exhausted (or the receiver aborted the message);
--   p_asked     what the receiver asked in its answer's webhook-delivery
--               header: 'disable' (the endpoint), or NULL.
--
-- The rules, per input:
--   * an attempt is a row of webhook_attempts (only for a delivery that
--     still exists); its trigger is oficina_attempt_trigger's, from the
--     attempts before it, and its next_attempt_at the retry it scheduled;
--   * a pending delivery becomes succeeded on a success; on a failure it
--     stays pending until p_retry_at, unless there is none (given up) or its
--     endpoint is no longer enabled, and then fails; a delivery already final
--     (a late duplicate) keeps its status but counts the attempt;
--   * a close fails a pending delivery with its reason, no attempt counted.
-- And per endpoint, taking a cycle's successes before its failures: a
-- failure sets failing_since (from now if a success of the cycle cleared
-- it); a success without a failure clears it and access_lost_notified_at;
-- an enabled endpoint failing for p_disable_after is disabled ('failing'),
-- and one whose receiver asked for it at once ('receiver_requested');
-- a subscriber_access_lost close sets access_lost_notified_at when unset
-- (the dispatcher then mails the managers, once per loss).
--
-- Returns a JSON array with one object per input, its position in "ord"
-- (1-based): the delivery's "status" after the record (null: not found, or
-- a close of a delivery no longer pending), "closed", "gave_up", "retry_at",
-- whether the endpoint is "failing" after it, and the endpoint's transitions,
-- each on one input of its endpoint (its first of the outcome that caused
-- it): "started_failing" (first failure after a success), "recovered" (first
-- success after failing), "disabled" (now, on its first failure, or on the
-- first input whose receiver asked, with the "reason") and "notify" (the
-- access loss to mail), the latter two with the endpoint's "url" and
-- "failing_since" for the mail.
--
-- Locks, so that two cycles never wait on each other in a cycle: first the
-- endpoints this record changes, in (company, id) order (FOR NO KEY UPDATE,
-- which the attempts' foreign-key checks do not wait for; an endpoint only
-- a success touches is locked only when it has a mark to clear), then the
-- deliveries in the order given, which the caller sorts by (company, id).
-- Two statements per cycle whatever its companies (decision 0031), with
-- plans the session keeps. It runs as the caller (SECURITY INVOKER), its
-- transaction scoped to the cycle's companies at once (app.company_ids,
-- the worker role's worker_batch policies) and cleared at the end, so
-- row-level security limits every statement to them. The workers' only.
CREATE OR REPLACE FUNCTION oficina_dispatch_record(p_companies text[], p_endpoints text[], p_deliveries text[],
                                                   p_outcomes text[], p_attempts text[], p_started timestamptz[],
                                                   p_codes integer[], p_errors text[], p_details text[],
                                                   p_retry_at timestamptz[], p_asked text[], p_now timestamptz,
                                                   p_disable_after interval)
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  caller text := current_setting('app.company_ids', true);
  n integer := cardinality(p_companies);
  health jsonb;   -- {endpoint: what the record made of it}, the endpoints it changed
  shut text[];    -- of those, the endpoints no longer enabled: their failures are not retried
  part jsonb;
BEGIN
  IF n IS NULL OR n = 0 THEN
    RETURN '[]';
  END IF;
  IF (n = ALL (ARRAY[cardinality(p_endpoints), cardinality(p_deliveries), cardinality(p_outcomes), cardinality(p_attempts),
                     cardinality(p_started), cardinality(p_codes), cardinality(p_errors), cardinality(p_details),
                     cardinality(p_retry_at), cardinality(p_asked)])) IS NOT TRUE
     OR EXISTS (SELECT 1 FROM unnest(p_outcomes) AS o
                 WHERE o IS NULL OR o NOT IN ('succeeded', 'failed', 'endpoint_disabled', 'plan_without_api', 'subscriber_access_lost'))
     OR EXISTS (SELECT 1 FROM unnest(p_asked) AS a WHERE a IS NOT NULL AND a <> 'disable') THEN
    RAISE EXCEPTION 'oficina_dispatch_record: arrays of unequal length or an unknown outcome' USING ERRCODE = '22023';
  END IF;
  PERFORM set_config('app.company_ids', array_to_string(ARRAY(SELECT DISTINCT x FROM unnest(p_companies) AS x ORDER BY x), ','), true);

    -- The endpoints.
    WITH x AS (
      SELECT v.company, v.endpoint, bool_or(v.outcome = 'succeeded') AS ok, bool_or(v.outcome = 'failed') AS failed,
             bool_or(v.outcome = 'subscriber_access_lost') AS lost, coalesce(bool_or(v.asked = 'disable'), false) AS asked
        FROM unnest(p_companies, p_endpoints, p_outcomes, p_asked) AS v(company, endpoint, outcome, asked)
       GROUP BY v.company, v.endpoint
    ), e AS (
      SELECT e.id, e.url, e.status, e.failing_since, e.access_lost_notified_at, x.ok, x.failed, x.lost, x.asked
        FROM public.webhook_endpoints e JOIN x ON x.endpoint = e.id AND x.company = e.company_id
       WHERE x.failed OR x.asked OR x.ok AND (e.failing_since IS NOT NULL OR e.access_lost_notified_at IS NOT NULL)
          OR x.lost AND e.access_lost_notified_at IS NULL
       ORDER BY e.company_id, e.id
         FOR NO KEY UPDATE OF e
    ), a AS (
      SELECT e.*,
             CASE WHEN e.failed THEN CASE WHEN e.ok THEN p_now ELSE coalesce(e.failing_since, p_now) END
                  WHEN e.ok THEN NULL
                  ELSE e.failing_since END AS failing_now,
             CASE WHEN e.lost AND (e.ok OR e.access_lost_notified_at IS NULL) THEN p_now
                  WHEN e.ok THEN NULL
                  ELSE e.access_lost_notified_at END AS notified_now,
             e.lost AND (e.ok OR e.access_lost_notified_at IS NULL) AS notify
        FROM e
    ), h AS (
      SELECT a.*, a.status = 'enabled' AND (a.asked OR a.failed AND p_now - a.failing_now >= p_disable_after) AS disable,
             CASE WHEN a.asked THEN 'receiver_requested' ELSE 'failing' END AS reason
        FROM a
    ), u AS (
      UPDATE public.webhook_endpoints AS w SET
             failing_since = h.failing_now, access_lost_notified_at = h.notified_now,
             status = CASE WHEN h.disable THEN 'disabled' ELSE w.status END,
             disabled_reason = CASE WHEN h.disable THEN h.reason ELSE w.disabled_reason END,
             updated_at = CASE WHEN h.disable THEN p_now ELSE w.updated_at END
        FROM h
       WHERE w.id = h.id
         AND (h.disable OR h.failing_now IS DISTINCT FROM h.failing_since
              OR h.notified_now IS DISTINCT FROM h.access_lost_notified_at)
    )
    SELECT coalesce(jsonb_object_agg(h.id, jsonb_build_object(
             'failing', h.failing_now IS NOT NULL,
             'started_failing', h.failing_since IS NULL AND h.failing_now IS NOT NULL,
             'recovered', h.failing_since IS NOT NULL AND h.failing_now IS NULL,
             'disabled', h.disable, 'reason', h.reason, 'notify', h.notify, 'url', h.url, 'failing_since', h.failing_now)), '{}'),
           coalesce(array_agg(h.id) FILTER (WHERE h.disable OR h.status <> 'enabled'), '{}')
      INTO health, shut
      FROM h;

    -- The deliveries and the attempts.
    WITH v AS (
      SELECT v.*, v.outcome IN ('succeeded', 'failed') AS attempt,
             v.outcome = 'failed' AND v.retry_at IS NOT NULL AND v.endpoint <> ALL (shut) AS retry
        FROM unnest(p_companies, p_endpoints, p_deliveries, p_outcomes, p_attempts, p_started, p_codes, p_errors,
                    p_details, p_retry_at, p_asked) WITH ORDINALITY
               AS v(company, endpoint, delivery, outcome, aid, started, code, err, detail, retry_at, asked, ord)
    ), was AS (
      -- What a failure or a close finds, to tell a give-up or a close; a
      -- success needs no second look.
      SELECT o.id, o.status FROM v JOIN public.webhook_deliveries o ON o.id = v.delivery AND o.company_id = v.company
       WHERE v.outcome <> 'succeeded' AND o.id = ANY (p_deliveries)
    ), d AS (
      UPDATE public.webhook_deliveries AS d SET
             status = CASE WHEN d.status <> 'pending' OR v.retry THEN d.status
                           WHEN v.outcome = 'succeeded' THEN 'succeeded'
                           ELSE 'failed' END,
             completed_at = CASE WHEN d.status <> 'pending' OR v.retry THEN d.completed_at ELSE p_now END,
             next_attempt_at = CASE WHEN d.status <> 'pending' THEN d.next_attempt_at WHEN v.retry THEN v.retry_at END,
             attempt_count = d.attempt_count + CASE WHEN v.attempt THEN 1 ELSE 0 END,
             last_attempt_at = CASE WHEN v.attempt THEN v.started ELSE d.last_attempt_at END,
             response_status_code = CASE WHEN v.attempt THEN v.code ELSE d.response_status_code END,
             error = CASE WHEN v.outcome = 'succeeded' THEN NULL WHEN v.attempt THEN v.err ELSE v.outcome END,
             updated_at = p_now
        FROM v
       WHERE d.id = v.delivery AND d.company_id = v.company AND d.endpoint_id = v.endpoint AND d.id = ANY (p_deliveries)
         AND (v.attempt OR d.status = 'pending')
      RETURNING v.ord, v.outcome, v.attempt, v.aid, v.started, v.code, v.err, v.detail,
                d.id, d.company_id, d.endpoint_id, d.kind, d.status, d.attempt_count, d.next_attempt_at
    ), i AS (
      INSERT INTO public.webhook_attempts
             (id, company_id, delivery_id, endpoint_id, started_at, finished_at, response_status_code, error, created_at,
              request_headers, response_headers, response_body, response_body_truncated, duration_ms, triggered_by,
              next_attempt_at)
      SELECT d.aid, d.company_id, d.id, d.endpoint_id, d.started, p_now, d.code,
             CASE WHEN d.outcome = 'failed' THEN d.err END, p_now,
             x.request_headers, x.response_headers, x.response_body, coalesce(x.response_body_truncated, false),
             x.duration_ms, public.oficina_attempt_trigger(d.kind, d.attempt_count - 1),
             CASE WHEN d.status = 'pending' THEN d.next_attempt_at END
        FROM d CROSS JOIN LATERAL jsonb_to_record(coalesce(d.detail, '{}')::jsonb)
               AS x(request_headers jsonb, response_headers jsonb, response_body text, response_body_truncated boolean,
                    duration_ms integer)
       WHERE d.attempt
    )
    SELECT jsonb_agg(jsonb_build_object(
             'ord', v.ord, 'status', d.status,
             'closed', NOT v.attempt AND d.id IS NOT NULL,
             'gave_up', coalesce(v.outcome = 'failed' AND was.status = 'pending' AND d.status = 'failed', false),
             'retry_at', CASE WHEN v.outcome = 'failed' AND d.status = 'pending' THEN d.next_attempt_at END,
             'failing', coalesce((v.h ->> 'failing')::boolean, false),
             'started_failing', v.first AND v.outcome = 'failed' AND coalesce((v.h ->> 'started_failing')::boolean, false),
             'recovered', v.first AND v.outcome = 'succeeded' AND coalesce((v.h ->> 'recovered')::boolean, false),
             'disabled', v.disabler AND coalesce((v.h ->> 'disabled')::boolean, false),
             'notify', v.first AND v.outcome = 'subscriber_access_lost' AND coalesce((v.h ->> 'notify')::boolean, false))
           || CASE WHEN v.disabler AND (v.h ->> 'disabled')::boolean
                     OR v.first AND v.outcome = 'subscriber_access_lost' AND (v.h ->> 'notify')::boolean
                   THEN jsonb_build_object('url', v.h -> 'url', 'failing_since', v.h -> 'failing_since',
                                           'reason', CASE WHEN (v.h ->> 'disabled')::boolean THEN v.h -> 'reason' END)
                   ELSE '{}' END)
      INTO part
      FROM (SELECT v.*, CASE WHEN v.h ->> 'reason' = 'receiver_requested' THEN v.asked_first ELSE v.first AND v.outcome = 'failed' END
                     AS disabler
              FROM (SELECT v.*, health -> v.endpoint AS h,
                           row_number() OVER (PARTITION BY v.endpoint, v.outcome ORDER BY v.ord) = 1 AS first,
                           coalesce(v.asked = 'disable', false)
                             AND row_number() OVER (PARTITION BY v.endpoint, v.asked = 'disable' ORDER BY v.ord) = 1 AS asked_first
                      FROM v) AS v) AS v
      LEFT JOIN d ON d.ord = v.ord
      LEFT JOIN was ON was.id = v.delivery;
  PERFORM set_config('app.company_ids', coalesce(caller, ''), true);
  RETURN coalesce(part, '[]');
END $$;

REVOKE ALL ON FUNCTION oficina_dispatch_record(text[], text[], text[], text[], text[], timestamptz[], integer[], text[],
                                               text[], timestamptz[], text[], timestamptz, interval) FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_dispatch_record(text[], text[], text[], text[], text[], timestamptz[], integer[], text[],
                                                  text[], timestamptz[], text[], timestamptz, interval) TO oficina_worker;
