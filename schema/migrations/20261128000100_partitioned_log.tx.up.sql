-- The event and delivery log in declarative partitions by day (issue 25,
-- decision 0027), so retention drops whole partitions instead of deleting
-- rows:
--   * event_outbox by created_at (event ids are random: the webhook-id);
--   * webhook_deliveries by id, which sorts by creation time (schema/ids),
--     so every read of a delivery by id prunes to one partition;
--   * webhook_attempts by delivery_id, so a delivery's attempts live and
--     are dropped with it.
-- Each has a DEFAULT partition for rows outside the day partitions made so
-- far; oficina_log_partitions (streams/sql) makes the day partitions ahead,
-- moves what the default holds into them, and drops what retention
-- passed. This migration only reshapes: the rows it carries over wait in
-- the default partitions until the first oficina_log_partitions (run by
-- every migrate, ops/migrate) files them by day.
--
-- Links inside the log (a delivery's event and resend_of, an attempt's
-- delivery, a recovery item's deliveries) are no longer foreign keys:
-- dropping a partition that a key points into would have PostgreSQL scan the
-- referencing table, a cost that grows with the log. They are written by
-- the log's own functions under row-level security, and readers treat a
-- link into a dropped day as gone (as ON DELETE CASCADE / SET NULL did).
--
-- The tables belong to oficina_log_owner, a NOLOGIN role, since only a
-- table's owner may add or drop its partitions; the one function that does
-- (a SECURITY DEFINER owned by it) is the workers' only.

DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'oficina_log_owner') THEN
    CREATE ROLE oficina_log_owner NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOINHERIT;
  END IF;
  -- The migrating role must be a member to hand the tables over and to
  -- change them in later migrations (a superuser is one already).
  IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    EXECUTE format('GRANT oficina_log_owner TO %I', current_user);
  END IF;
END $$;
GRANT USAGE, CREATE ON SCHEMA public TO oficina_log_owner;

ALTER TABLE webhook_recover_items DROP CONSTRAINT webhook_recover_items_company_id_delivery_id_fkey;
ALTER TABLE webhook_recover_items DROP CONSTRAINT webhook_recover_items_resend_id_fkey;

CREATE TABLE event_outbox_new (
  id             text NOT NULL,               -- evt_ + 32 hex, also the JetStream Nats-Msg-Id
  company_id     text NOT NULL REFERENCES companies(id),
  type           text NOT NULL,
  body           bytea NOT NULL,              -- the envelope exactly as published and delivered
  occurred_at    timestamptz NOT NULL,
  published_at   timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now(),
  has_deliveries boolean NOT NULL DEFAULT false
) PARTITION BY RANGE (created_at);

CREATE TABLE webhook_deliveries_new (
  id                    text COLLATE "C" NOT NULL,   -- also the DELIVERIES Nats-Msg-Id; sorts by creation time
  company_id            text NOT NULL REFERENCES companies(id),
  endpoint_id           text NOT NULL,
  event_id              text NOT NULL,
  event_type            text NOT NULL,
  kind                  text NOT NULL DEFAULT 'event' CHECK (kind IN ('event','ping','resend')),
  resend_of             text,
  status                text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','succeeded','failed')),
  response_status_code  integer,
  error                 text,
  attempt_count         integer NOT NULL DEFAULT 0,
  last_attempt_at       timestamptz,
  next_attempt_at       timestamptz,
  completed_at          timestamptz,
  published_at          timestamptz,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  recover_task_id       text,
  FOREIGN KEY (company_id, endpoint_id) REFERENCES webhook_endpoints (company_id, id) ON DELETE CASCADE,
  FOREIGN KEY (company_id, recover_task_id) REFERENCES webhook_recover_tasks (company_id, id) ON DELETE SET NULL (recover_task_id)
) PARTITION BY RANGE (id);

CREATE TABLE webhook_attempts_new (
  id                      text NOT NULL,
  company_id              text NOT NULL REFERENCES companies(id),
  delivery_id             text COLLATE "C" NOT NULL,
  endpoint_id             text NOT NULL,
  started_at              timestamptz NOT NULL,
  finished_at             timestamptz,
  response_status_code    integer,
  error                   text,
  created_at              timestamptz NOT NULL DEFAULT now(),
  request_headers         jsonb,
  request_body            text,
  request_body_truncated  boolean NOT NULL DEFAULT false,
  response_headers        jsonb,
  response_body           text,
  response_body_truncated boolean NOT NULL DEFAULT false,
  duration_ms             integer,
  triggered_by            text CHECK (triggered_by IN ('automatic', 'manual')),
  next_attempt_at         timestamptz,
  FOREIGN KEY (company_id, endpoint_id) REFERENCES webhook_endpoints (company_id, id) ON DELETE CASCADE
) PARTITION BY RANGE (delivery_id);

CREATE TABLE event_outbox_default PARTITION OF event_outbox_new DEFAULT;
CREATE TABLE webhook_deliveries_default PARTITION OF webhook_deliveries_new DEFAULT;
CREATE TABLE webhook_attempts_default PARTITION OF webhook_attempts_new DEFAULT;

INSERT INTO event_outbox_new (id, company_id, type, body, occurred_at, published_at, created_at, has_deliveries)
SELECT id, company_id, type, body, occurred_at, published_at, created_at, has_deliveries FROM event_outbox;

INSERT INTO webhook_deliveries_new (id, company_id, endpoint_id, event_id, event_type, kind, resend_of, status,
  response_status_code, error, attempt_count, last_attempt_at, next_attempt_at, completed_at, published_at,
  created_at, updated_at, recover_task_id)
SELECT id, company_id, endpoint_id, event_id, event_type, kind, resend_of, status,
  response_status_code, error, attempt_count, last_attempt_at, next_attempt_at, completed_at, published_at,
  created_at, updated_at, recover_task_id FROM webhook_deliveries;

INSERT INTO webhook_attempts_new (id, company_id, delivery_id, endpoint_id, started_at, finished_at,
  response_status_code, error, created_at, request_headers, request_body, request_body_truncated, response_headers,
  response_body, response_body_truncated, duration_ms, triggered_by, next_attempt_at)
SELECT id, company_id, delivery_id, endpoint_id, started_at, finished_at,
  response_status_code, error, created_at, request_headers, request_body, request_body_truncated, response_headers,
  response_body, response_body_truncated, duration_ms, triggered_by, next_attempt_at FROM webhook_attempts;

DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE event_outbox;

ALTER TABLE event_outbox_new RENAME TO event_outbox;
ALTER TABLE webhook_deliveries_new RENAME TO webhook_deliveries;
ALTER TABLE webhook_attempts_new RENAME TO webhook_attempts;

-- The same indexes as before, less those that only served a foreign key or
-- a DELETE by age. A partitioned table's unique keys include its partition
-- key: an event id is unique by construction (128 random bits).
ALTER TABLE event_outbox ADD CONSTRAINT event_outbox_pkey PRIMARY KEY (id, created_at);
CREATE INDEX event_outbox_company ON event_outbox (company_id, occurred_at);
CREATE INDEX event_outbox_unpublished ON event_outbox (company_id, created_at) WHERE published_at IS NULL;

ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id);
CREATE UNIQUE INDEX webhook_deliveries_endpoint ON webhook_deliveries (company_id, endpoint_id, id);
CREATE INDEX webhook_deliveries_endpoint_created ON webhook_deliveries (company_id, endpoint_id, created_at);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
CREATE INDEX webhook_deliveries_unpublished ON webhook_deliveries (company_id, created_at) WHERE published_at IS NULL;
CREATE INDEX webhook_deliveries_retry_due ON webhook_deliveries (next_attempt_at)
  WHERE status = 'pending' AND next_attempt_at IS NOT NULL;
CREATE INDEX webhook_deliveries_recover_waiting ON webhook_deliveries (recover_task_id)
  WHERE recover_task_id IS NOT NULL AND status = 'pending' AND attempt_count = 0;

ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_pkey PRIMARY KEY (delivery_id, id);
CREATE INDEX webhook_attempts_endpoint_started ON webhook_attempts (company_id, endpoint_id, started_at);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['event_outbox', 'webhook_deliveries', 'webhook_attempts'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant ON %I USING (company_id = oficina_company()) WITH CHECK (company_id = oficina_company())', t);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO oficina_app', t);
    EXECUTE format('ALTER TABLE %I OWNER TO oficina_log_owner', t);
    EXECUTE format('ALTER TABLE %I OWNER TO oficina_log_owner', t || '_default'); -- not recursive
  END LOOP;
  FOREACH t IN ARRAY ARRAY['event_outbox', 'webhook_deliveries'] LOOP
    EXECUTE format('GRANT SELECT ON %I TO oficina_definer', t);
    EXECUTE format('CREATE POLICY definer_reads ON %I FOR SELECT TO oficina_definer USING (true)', t);
  END LOOP;
END $$;
