-- What the publisher marks once JetStream has a write's messages
-- (streams' publish): an event nobody subscribed to leaves Postgres (the
-- firehose has it), the others and the deliveries are stamped published.
-- Each row is marked by its key: a kept (generic) plan of
-- "id = ANY (array) AND published_at IS NULL" ANDed the primary key with
-- the partial index of unpublished rows and read that whole index on every
-- mark, a cost growing with the backlog and with dead rows.
--
-- PL/pgSQL so the session keeps the plans; SECURITY INVOKER, so row-level
-- security applies inside as outside.
CREATE OR REPLACE FUNCTION oficina_mark_published(p_events text[], p_deliveries text[], p_at timestamptz) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE k text;
BEGIN
  IF cardinality(p_events) > 0 THEN
    DELETE FROM public.event_outbox WHERE id = ANY (p_events) AND NOT has_deliveries;
    FOREACH k IN ARRAY p_events LOOP
      UPDATE public.event_outbox SET published_at = p_at WHERE id = k AND has_deliveries AND published_at IS NULL;
    END LOOP;
  END IF;
  IF cardinality(p_deliveries) > 0 THEN
    FOREACH k IN ARRAY p_deliveries LOOP
      UPDATE public.webhook_deliveries SET published_at = p_at WHERE id = k AND published_at IS NULL;
    END LOOP;
  END IF;
END
$$;
