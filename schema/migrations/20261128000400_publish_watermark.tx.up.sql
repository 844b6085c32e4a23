-- No row of the log is rewritten to say it was published (issue 25 item 2,
-- decision 0029). What was published is known without a mark per row:
--   * each process that publishes after commit keeps one row in
--     publishers: its low watermark (every write it stamped before `low` is
--     on NATS, or in publish_backlog) and its last heartbeat. A process
--     whose heartbeat stops is lost: the relay puts every event and delivery
--     recorded since its low watermark in the backlog (oficina_publishers_lost);
--     JetStream's duplicate window drops what was already published;
--   * publish_backlog holds the ids a publish is not known to have covered:
--     a publish that failed (NATS down, backpressure, no acknowledgement), a
--     write with no publisher (routines), a lost process's window. The relay
--     publishes and deletes them. Narrow rows, only on failure.
-- The per-row published_at, its two partial indexes and the mark function go.

CREATE TABLE publish_backlog (
  company_id text NOT NULL,
  id         text NOT NULL,  -- an event id (kind 'event') or a delivery id
  kind       text NOT NULL CHECK (kind IN ('event', 'delivery')),
  created_at timestamptz NOT NULL, -- the row's: its day partition, and the relay's minimum age
  PRIMARY KEY (company_id, id)
);
ALTER TABLE publish_backlog ENABLE ROW LEVEL SECURITY;
ALTER TABLE publish_backlog FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant ON publish_backlog USING (company_id = oficina_company()) WITH CHECK (company_id = oficina_company());
-- UPDATE only for the relay's FOR UPDATE SKIP LOCKED: no one rewrites an entry.
GRANT SELECT, INSERT, UPDATE, DELETE ON publish_backlog TO oficina_app;
-- The definer functions count it, list its companies and fill it from a
-- lost process's window, across companies.
GRANT SELECT, INSERT ON publish_backlog TO oficina_definer;
CREATE POLICY definer_reads ON publish_backlog FOR SELECT TO oficina_definer USING (true);
CREATE POLICY definer_fills ON publish_backlog FOR INSERT TO oficina_definer WITH CHECK (true);

-- One row per publishing process; no company's data. Reached only through
-- oficina_publisher_beat and oficina_publishers_lost. Updated every second
-- by its process, so room is left for HOT updates.
CREATE TABLE publishers (
  id   text PRIMARY KEY,
  low  timestamptz NOT NULL,
  beat timestamptz NOT NULL
) WITH (fillfactor = 50);
GRANT SELECT, INSERT, UPDATE, DELETE ON publishers TO oficina_definer;

-- A lost process's window is found by creation time: deliveries by id
-- (their ids sort by it), events by a BRIN index on created_at — an
-- append-only table's cheapest index, which an insert barely touches.
CREATE INDEX event_outbox_created ON event_outbox USING brin (created_at);

-- What was left unpublished when this runs goes to the backlog.
INSERT INTO publish_backlog (company_id, id, kind, created_at)
SELECT company_id, id, 'event', created_at FROM event_outbox WHERE published_at IS NULL
ON CONFLICT DO NOTHING;
INSERT INTO publish_backlog (company_id, id, kind, created_at)
SELECT company_id, id, 'delivery', created_at FROM webhook_deliveries WHERE published_at IS NULL
ON CONFLICT DO NOTHING;

DROP FUNCTION IF EXISTS oficina_mark_published(text[], text[], timestamptz);
DROP FUNCTION IF EXISTS oficina_unpublished_companies(timestamptz, integer);
DO $$
BEGIN
  IF to_regclass('oficina_function_sources') IS NOT NULL THEN
    DELETE FROM oficina_function_sources WHERE name IN ('oficina_mark_published', 'oficina_unpublished_companies');
  END IF;
END $$;
DROP INDEX event_outbox_unpublished;
DROP INDEX webhook_deliveries_unpublished;
ALTER TABLE event_outbox DROP COLUMN published_at;
ALTER TABLE webhook_deliveries DROP COLUMN published_at;
