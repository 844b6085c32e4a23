-- The events of one write and their deliveries (streams.Record): each event
-- in the outbox and, for each enabled endpoint of the company subscribed to
-- its type ("*", the type, or its family wildcard), one delivery. Delivery
-- ids come from p_pool, in endpoint order; a match beyond the pool is
-- returned without an id for the caller to insert. p_about (NULL, or one
-- entry per event) names, for an operational event, the endpoint it is
-- about: that endpoint never gets it, and '*' does not subscribe to it
-- (decision 0037); NULL for every other event, so a write without one
-- pays nothing for it.
--
-- PL/pgSQL so the session keeps the statements' plans (the simple protocol
-- re-plans every bare statement); SECURITY INVOKER, so row-level security
-- applies inside as outside; tables schema-qualified so the caller's
-- search_path cannot redirect them.
CREATE OR REPLACE FUNCTION oficina_record_events(p_company text, p_ids text[], p_types text[], p_bodies text[], p_pool text[],
                                      p_occurred_at timestamptz, p_now timestamptz, p_about text[] DEFAULT NULL)
RETURNS TABLE (event_id text, endpoint_id text, delivery_id text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH v AS (
    SELECT * FROM unnest(p_ids, p_types, p_bodies, p_about) AS v(id, type, body, about)
  ), m AS MATERIALIZED (
    SELECT v.id AS event_id, v.type AS event_type, e.id AS endpoint_id,
           p_pool[row_number() OVER (ORDER BY e.id, v.id)] AS delivery_id
      FROM v JOIN public.webhook_endpoints e
        ON e.company_id = p_company AND e.status = 'enabled'
       AND e.events && ARRAY[CASE WHEN v.about IS NULL THEN '*' END, v.type, split_part(v.type, '.', 1) || '.*']
       AND e.id IS DISTINCT FROM v.about
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
