-- The events of one write and their deliveries (streams.Record): each event
-- in the outbox and, for each enabled endpoint of the company subscribed to
-- its type ("*", the type, or its family wildcard), one delivery. Delivery
-- ids come from p_pool, in endpoint order; a match beyond the pool is
-- returned without an id for the caller to insert (with its order_key and
-- order_seq). p_about (NULL, or one entry per event) names, for an
-- operational event, the endpoint it is about: that endpoint never gets it,
-- and '*' does not subscribe to it (decision 0037); NULL for every other
-- event, so a write without one pays nothing for it.
--
-- A delivery to an endpoint with ordering 'object' (decision 0039) carries
-- its object's id (order_key) and its place (order_seq): one number of
-- webhook_delivery_order_seq per write, taken here, after the write has
-- locked the object's row, times 65536, plus the event's place in the
-- write. So the events of one object are placed in commit order, and those
-- of one write in the order it recorded them; a write with no ordered
-- endpoint takes no number.
--
-- PL/pgSQL so the session keeps the statements' plans (the simple protocol
-- re-plans every bare statement); SECURITY INVOKER, so row-level security
-- applies inside as outside; tables schema-qualified so the caller's
-- search_path cannot redirect them.
CREATE OR REPLACE FUNCTION oficina_record_events(p_company text, p_ids text[], p_types text[], p_bodies text[], p_pool text[],
                                      p_occurred_at timestamptz, p_now timestamptz, p_about text[] DEFAULT NULL)
RETURNS TABLE (event_id text, endpoint_id text, delivery_id text, order_key text, order_seq bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH v AS (
    SELECT * FROM unnest(p_ids, p_types, p_bodies, p_about) WITH ORDINALITY AS v(id, type, body, about, ord)
  ), m0 AS MATERIALIZED (
    SELECT v.id AS event_id, v.type AS event_type, e.id AS endpoint_id, v.ord,
           p_pool[row_number() OVER (ORDER BY e.id, v.id)] AS delivery_id,
           CASE WHEN e.ordering = 'object' THEN (v.body::jsonb) #>> '{data,object,id}' END AS order_key
      FROM v JOIN public.webhook_endpoints e
        ON e.company_id = p_company AND e.status = 'enabled'
       AND e.events && ARRAY[CASE WHEN v.about IS NULL THEN '*' END, v.type, split_part(v.type, '.', 1) || '.*']
       AND e.id IS DISTINCT FROM v.about
  ), o AS MATERIALIZED (
    SELECT nextval('public.webhook_delivery_order_seq') AS n WHERE EXISTS (SELECT 1 FROM m0 WHERE m0.order_key IS NOT NULL)
  ), m AS (
    SELECT m0.*, CASE WHEN m0.order_key IS NOT NULL THEN (SELECT o.n FROM o) * 65536 + m0.ord END AS order_seq FROM m0
  ), ins AS (
    INSERT INTO public.event_outbox (id, company_id, type, body, occurred_at, has_deliveries, created_at)
    SELECT v.id, p_company, v.type, convert_to(v.body, 'UTF8'), p_occurred_at,
           EXISTS (SELECT 1 FROM m WHERE m.event_id = v.id), p_now
      FROM v
  ), dl AS (
    INSERT INTO public.webhook_deliveries (id, company_id, endpoint_id, event_id, event_type, kind, status, created_at, updated_at,
                                           order_key, order_seq)
    SELECT m.delivery_id, p_company, m.endpoint_id, m.event_id, m.event_type, 'event', 'pending', p_now, p_now,
           m.order_key, m.order_seq
      FROM m WHERE m.delivery_id IS NOT NULL
  )
  SELECT m.event_id, m.endpoint_id, m.delivery_id, m.order_key, m.order_seq FROM m ORDER BY m.endpoint_id, m.event_id;
END
$$;
