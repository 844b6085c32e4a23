-- Webhooks: endpoints, deliveries and their attempts; the mail outbox; and the
-- narrow doors the cross-company workers (relay, retention sweeper, mail
-- sender) use to find which companies have work, before handling each item
-- inside that company's transaction.

-- An event row is kept in Postgres only when it has deliveries (the webhook
-- body is read from here by manual resends). Events nobody subscribed to are
-- published to the EVENTS firehose and then deleted (docs/events.md).
ALTER TABLE event_outbox ADD COLUMN has_deliveries boolean NOT NULL DEFAULT false;
CREATE INDEX event_outbox_created ON event_outbox (created_at);

CREATE TABLE webhook_endpoints (
  id                          text PRIMARY KEY,
  company_id                  text NOT NULL REFERENCES companies(id),
  url                         text NOT NULL,
  description                 text NOT NULL DEFAULT '',
  -- Exact event names, families ("sale.*") or "*" alone.
  events                      text[] NOT NULL CHECK (cardinality(events) > 0),
  status                      text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled','disabled')),
  -- manual, emergency_key_rotation, or the dispatcher's reasons.
  disabled_reason             text,
  -- The signing secret must be readable to sign (HMAC), so it is stored as
  -- is; two endpoints never share one.
  secret                      text NOT NULL UNIQUE,
  -- After rotate_secret the previous secret keeps signing (a second
  -- signature) until previous_secret_expires_at.
  previous_secret             text,
  previous_secret_expires_at  timestamptz,
  -- The subscriber: whose access the dispatcher checks before each send.
  subscriber_member_id        text NOT NULL REFERENCES members(id),
  subscriber_key_id           text REFERENCES api_keys(id),
  created_at                  timestamptz NOT NULL DEFAULT now(),
  updated_at                  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_company ON webhook_endpoints (company_id, id);
CREATE INDEX webhook_endpoints_enabled ON webhook_endpoints (company_id) WHERE status = 'enabled';
CREATE INDEX webhook_endpoints_key ON webhook_endpoints (subscriber_key_id) WHERE subscriber_key_id IS NOT NULL;

CREATE TABLE webhook_deliveries (
  id                    text PRIMARY KEY,              -- also the DELIVERIES Nats-Msg-Id
  company_id            text NOT NULL REFERENCES companies(id),
  endpoint_id           text NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  event_id              text NOT NULL REFERENCES event_outbox(id) ON DELETE CASCADE,
  event_type            text NOT NULL,
  -- event: created by the write; ping; resend: a manual resend of resend_of.
  kind                  text NOT NULL DEFAULT 'event' CHECK (kind IN ('event','ping','resend')),
  resend_of             text REFERENCES webhook_deliveries(id) ON DELETE SET NULL,
  status                text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','succeeded','failed')),
  response_status_code  integer,                        -- last non-2xx answer
  error                 text,                           -- last failure without answer, or close reason
  attempt_count         integer NOT NULL DEFAULT 0,
  last_attempt_at       timestamptz,
  next_attempt_at       timestamptz,
  completed_at          timestamptz,
  published_at          timestamptz,                    -- on DELIVERIES
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (company_id, endpoint_id, id);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
CREATE INDEX webhook_deliveries_unpublished ON webhook_deliveries (created_at) WHERE published_at IS NULL;

CREATE TABLE webhook_attempts (
  id                    text PRIMARY KEY,
  company_id            text NOT NULL REFERENCES companies(id),
  delivery_id           text NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  endpoint_id           text NOT NULL,
  started_at            timestamptz NOT NULL,
  finished_at           timestamptz,
  response_status_code  integer,
  error                 text,
  created_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (company_id, delivery_id, id);

-- Mail to the company's people (owners and admins), sent after commit by
-- the mail sender over SMTP (or logged in dev).
CREATE TABLE mail_outbox (
  id            text PRIMARY KEY,
  company_id    text NOT NULL REFERENCES companies(id),
  kind          text NOT NULL,
  to_addresses  text[] NOT NULL,
  subject       text NOT NULL,
  body          text NOT NULL,
  attempts      integer NOT NULL DEFAULT 0,
  last_error    text,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  sent_at       timestamptz,
  failed_at     timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mail_outbox_company ON mail_outbox (company_id, id);
CREATE INDEX mail_outbox_unsent ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL AND failed_at IS NULL;
CREATE INDEX mail_outbox_created ON mail_outbox (created_at);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['webhook_endpoints','webhook_deliveries','webhook_attempts','mail_outbox'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant ON %I USING (company_id = oficina_company()) WITH CHECK (company_id = oficina_company())', t);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO oficina_app', t);
  END LOOP;
END
$$;

-- Doors through RLS for cross-company workers. Each answers only which
-- companies have work; the rows themselves are then read and changed under
-- that company's policy (tenant.Tx), with FOR UPDATE SKIP LOCKED.

-- Companies with events or deliveries left unpublished since before p_before
-- (the relay).
CREATE FUNCTION oficina_unpublished_companies(p_before timestamptz, p_limit integer) RETURNS SETOF text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
  SELECT company_id FROM (
    SELECT company_id FROM event_outbox WHERE published_at IS NULL AND created_at < p_before
    UNION
    SELECT company_id FROM webhook_deliveries WHERE published_at IS NULL AND created_at < p_before
  ) c LIMIT p_limit $$;

-- Companies with events or mail recorded before p_before (retention).
CREATE FUNCTION oficina_expired_companies(p_before timestamptz, p_limit integer) RETURNS SETOF text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
  SELECT company_id FROM (
    SELECT company_id FROM event_outbox WHERE created_at < p_before
    UNION
    SELECT company_id FROM mail_outbox WHERE created_at < p_before
  ) c LIMIT p_limit $$;

-- Companies with mail due at p_now (the mail sender).
CREATE FUNCTION oficina_mail_companies(p_now timestamptz, p_limit integer) RETURNS SETOF text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
  SELECT DISTINCT company_id FROM mail_outbox
   WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= p_now
   LIMIT p_limit $$;

REVOKE ALL ON FUNCTION oficina_unpublished_companies(timestamptz, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION oficina_expired_companies(timestamptz, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION oficina_mail_companies(timestamptz, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION oficina_unpublished_companies(timestamptz, integer) TO oficina_app;
GRANT EXECUTE ON FUNCTION oficina_expired_companies(timestamptz, integer) TO oficina_app;
GRANT EXECUTE ON FUNCTION oficina_mail_companies(timestamptz, integer) TO oficina_app;
