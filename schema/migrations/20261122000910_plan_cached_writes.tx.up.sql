-- The statements every write runs, as PL/pgSQL functions. The API speaks the
-- simple protocol (no prepared statements, so it works behind transaction
-- poolers), which makes PostgreSQL parse, rewrite (row-level security) and
-- plan each statement again on every call; for these statements that was
-- two thirds of their cost. A PL/pgSQL function keeps its statements' plans
-- for the life of the session. They run as the caller (SECURITY INVOKER),
-- so row-level security applies inside exactly as outside; tables are
-- schema-qualified so the caller's search_path cannot redirect them.

-- The events of one write and their deliveries (streams.Record): each event
-- in the outbox and, for each enabled endpoint of the company subscribed to
-- its type ("*", the type, or its family wildcard), one delivery. Delivery
-- ids come from p_pool, in endpoint order; a match beyond the pool is
-- returned without an id for the caller to insert.
CREATE FUNCTION oficina_record_events(p_company text, p_ids text[], p_types text[], p_bodies text[], p_pool text[],
                                      p_occurred_at timestamptz, p_now timestamptz)
RETURNS TABLE (event_id text, endpoint_id text, delivery_id text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH v AS (
    SELECT * FROM unnest(p_ids, p_types, p_bodies) AS v(id, type, body)
  ), m AS MATERIALIZED (
    SELECT v.id AS event_id, v.type AS event_type, e.id AS endpoint_id,
           p_pool[row_number() OVER (ORDER BY e.id, v.id)] AS delivery_id
      FROM v JOIN public.webhook_endpoints e
        ON e.company_id = p_company AND e.status = 'enabled'
       AND e.events && ARRAY['*', v.type, split_part(v.type, '.', 1) || '.*']
  ), ins AS (
    INSERT INTO public.event_outbox (id, company_id, type, body, occurred_at, has_deliveries, created_at)
    SELECT v.id, p_company, v.type, convert_to(v.body, 'UTF8'), p_occurred_at,
           EXISTS (SELECT 1 FROM m WHERE m.event_id = v.id), p_now
      FROM v
  ), dl AS (
    INSERT INTO public.webhook_deliveries (id, company_id, endpoint_id, event_id, event_type, kind, status, created_at, updated_at)
    SELECT m.delivery_id, p_company, m.endpoint_id, m.event_id, m.event_type, 'event', 'pending', p_now, p_now
      FROM m WHERE m.delivery_id IS NOT NULL
  )
  SELECT m.event_id, m.endpoint_id, m.delivery_id FROM m ORDER BY m.endpoint_id, m.event_id;
END
$$;

-- What the publisher marks once JetStream has a write's messages: an event
-- nobody subscribed to leaves Postgres (the firehose has it), the others
-- and the deliveries are stamped published.
CREATE FUNCTION oficina_mark_published(p_events text[], p_deliveries text[], p_at timestamptz) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF cardinality(p_events) > 0 THEN
    DELETE FROM public.event_outbox WHERE id = ANY (p_events) AND NOT has_deliveries;
    UPDATE public.event_outbox SET published_at = p_at
     WHERE id = ANY (p_events) AND has_deliveries AND published_at IS NULL;
  END IF;
  IF cardinality(p_deliveries) > 0 THEN
    UPDATE public.webhook_deliveries SET published_at = p_at WHERE id = ANY (p_deliveries) AND published_at IS NULL;
  END IF;
END
$$;

-- What creating a service order needs of its company (orders'
-- loadCreationContext): plan and settings, how many of p_techs are active
-- technicians, and the automatic checklists of p_type (and of no type).
CREATE FUNCTION oficina_order_context(p_company text, p_techs text[], p_type text)
RETURNS TABLE (plan text, timezone text, type_required boolean, required_fields text[],
               technician_completion_order text, monthly_order_quota integer, order_quota_unlimited boolean,
               technicians bigint, checklists jsonb)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  SELECT c.plan, c.timezone,
         EXISTS (SELECT 1 FROM public.service_order_types t WHERE t.company_id = c.id AND t.active AND t.required_on_create),
         COALESCE(s.required_fields, '{}'),
         COALESCE(s.technician_completion_order, 'none'),
         s.monthly_order_quota, COALESCE(s.order_quota_unlimited, false),
         (SELECT count(*) FROM public.members m
           WHERE m.company_id = c.id AND m.id = ANY (p_techs) AND m.type = 'technician' AND m.status = 'active'),
         (SELECT COALESCE(jsonb_agg(jsonb_build_object('id', k.id, 'items', k.items) ORDER BY k.id), '[]')
            FROM public.service_order_checklists k
           WHERE k.company_id = c.id AND k.active AND (k.type_id IS NULL OR k.type_id = p_type))
    FROM public.companies c LEFT JOIN public.service_order_settings s ON s.company_id = c.id
   WHERE c.id = p_company;
END
$$;

-- The claim of an Idempotency-Key, sent with the write's BEGIN
-- (idempotency.ClaimFirst): the key's advisory lock for the transaction, or
-- SQLSTATE OF409 when another request holds it (409
-- idempotency_in_progress), which ends the transaction before it did
-- anything.
CREATE FUNCTION oficina_idempotency_claim(p_lock bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF NOT pg_try_advisory_xact_lock(p_lock) THEN
    RAISE EXCEPTION 'idempotency key in use by another request' USING ERRCODE = 'OF409';
  END IF;
END
$$;

-- A write's stored response (idempotency.Save), replacing an expired record
-- of its key; false when a live record is in the way.
CREATE FUNCTION oficina_idempotency_save(p_company text, p_key text, p_hash bytea, p_method text, p_path text,
                                         p_status integer, p_headers jsonb, p_body bytea,
                                         p_created_at timestamptz, p_expires_at timestamptz) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  INSERT INTO public.idempotency_records AS r (company_id, idempotency_key, request_hash, method, path, status,
                                              headers, body, created_at, expires_at)
  VALUES (p_company, p_key, p_hash, p_method, p_path, p_status, p_headers, p_body, p_created_at, p_expires_at)
  ON CONFLICT (company_id, idempotency_key) DO UPDATE
     SET request_hash = EXCLUDED.request_hash, method = EXCLUDED.method, path = EXCLUDED.path,
         status = EXCLUDED.status, headers = EXCLUDED.headers, body = EXCLUDED.body,
         created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
   WHERE r.expires_at <= EXCLUDED.created_at;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n = 1;
END
$$;

-- What creating a sale needs of its company (sales' loadContext).
CREATE FUNCTION oficina_sale_context(p_company text)
RETURNS TABLE (plan text, timezone text, track_in_finance boolean, monthly_sale_quota integer,
               sale_quota_unlimited boolean, default_account_id text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  SELECT c.plan, c.timezone, COALESCE(s.track_in_finance, true), s.monthly_sale_quota,
         COALESCE(s.sale_quota_unlimited, false),
         (SELECT a.id FROM public.finance_accounts a WHERE a.company_id = c.id AND a.is_default)
    FROM public.companies c LEFT JOIN public.sales_settings s ON s.company_id = c.id
   WHERE c.id = p_company;
END
$$;
