-- The relay's hand-over of lost publishers (decision 0029): each process
-- whose last heartbeat is before p_before may have died with writes
-- committed and not published. Every event (but pings, never on EVENTS) and
-- every delivery recorded since its low watermark, less p_margin for the
-- clocks, goes to publish_backlog, and its row is removed; JetStream's
-- duplicate window drops what had been published. Deliveries are found by
-- id (ids sort by creation), events by the BRIN index on created_at.
-- Answers how many processes it handed over. The workers' only: owned by
-- oficina_definer, pg_temp searched last.
CREATE OR REPLACE FUNCTION oficina_publishers_lost(p_before timestamptz, p_margin interval) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  p record;
  n integer := 0;
BEGIN
  FOR p IN SELECT id, low FROM publishers WHERE beat < p_before ORDER BY id FOR UPDATE SKIP LOCKED LOOP
    INSERT INTO publish_backlog (company_id, id, kind, created_at)
    SELECT e.company_id, e.id, 'event', e.created_at FROM event_outbox e
     WHERE e.created_at >= p.low - p_margin AND e.type <> 'ping'
    ON CONFLICT DO NOTHING;
    INSERT INTO publish_backlog (company_id, id, kind, created_at)
    SELECT d.company_id, d.id, 'delivery', d.created_at FROM webhook_deliveries d
     WHERE d.id >= oficina_id_floor('dlv', p.low - p_margin)
    ON CONFLICT DO NOTHING;
    DELETE FROM publishers WHERE id = p.id;
    n := n + 1;
  END LOOP;
  RETURN n;
END $$;

ALTER FUNCTION oficina_publishers_lost(timestamptz, interval) OWNER TO oficina_definer;
REVOKE ALL ON FUNCTION oficina_publishers_lost(timestamptz, interval) FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_publishers_lost(timestamptz, interval) TO oficina_worker;
