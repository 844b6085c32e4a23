-- oficina_mark_published (plan_cached_writes) marked rows with
-- "id = ANY (array) AND published_at IS NULL". Its kept (generic) plan does
-- not know the array's length and ANDs the primary key with the partial
-- index of unpublished rows, reading that whole index on every mark: the
-- cost grows with the unpublished backlog and with dead rows. Marking each
-- row by its key keeps every mark a primary-key lookup whatever the plan.
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
