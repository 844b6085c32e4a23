-- Events: the transactional outbox. A write records its events here in its
-- own transaction; the API publishes them to JetStream right after commit and
-- a relay republishes whatever a crash left unpublished.
CREATE TABLE event_outbox (
  id            text PRIMARY KEY,           -- evt_ + 32 hex, also the JetStream Nats-Msg-Id
  company_id    text NOT NULL REFERENCES companies(id),
  type          text NOT NULL,
  body          bytea NOT NULL,             -- the envelope exactly as published and delivered
  occurred_at   timestamptz NOT NULL,
  published_at  timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX event_outbox_unpublished ON event_outbox (created_at) WHERE published_at IS NULL;
CREATE INDEX event_outbox_company ON event_outbox (company_id, occurred_at);

ALTER TABLE event_outbox ENABLE ROW LEVEL SECURITY;
ALTER TABLE event_outbox FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant ON event_outbox USING (company_id = oficina_company()) WITH CHECK (company_id = oficina_company());
GRANT SELECT, INSERT, UPDATE, DELETE ON event_outbox TO oficina_app;
