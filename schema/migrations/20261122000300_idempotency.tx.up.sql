-- Idempotency records (spec 4.1): the stored response of a write sent with an
-- Idempotency-Key. A record commits in the same transaction as the write it
-- answers, so a crash never leaves one without the other. Keys are scoped to
-- the company; records live 24 hours (expires_at) and a sweeper deletes them.
CREATE TABLE idempotency_records (
  company_id       text NOT NULL REFERENCES companies(id),
  idempotency_key  text NOT NULL CHECK (length(idempotency_key) BETWEEN 1 AND 255),
  -- SHA-256 of method, path, query and canonical JSON body: the "same request".
  request_hash     bytea NOT NULL,
  method           text NOT NULL,
  path             text NOT NULL,
  status           integer NOT NULL,
  headers          jsonb NOT NULL DEFAULT '{}',
  body             bytea NOT NULL,
  created_at       timestamptz NOT NULL,
  expires_at       timestamptz NOT NULL,
  PRIMARY KEY (company_id, idempotency_key)
);
-- Records arrive in time order, so a BRIN index serves the sweeper at almost
-- no cost to the insert on every idempotent write.
CREATE INDEX idempotency_records_expires ON idempotency_records USING brin (expires_at);

ALTER TABLE idempotency_records ENABLE ROW LEVEL SECURITY;
ALTER TABLE idempotency_records FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant ON idempotency_records USING (company_id = oficina_company()) WITH CHECK (company_id = oficina_company());
GRANT SELECT, INSERT, UPDATE, DELETE ON idempotency_records TO oficina_app;

-- The sweeper works across companies but deletes under each company's
-- policy; this definer function only tells it which companies have expired
-- records (the same single door through RLS as oficina_key_company).
CREATE FUNCTION oficina_idempotency_expired(p_now timestamptz, p_limit integer) RETURNS SETOF text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public
  AS $$ SELECT DISTINCT company_id FROM (
          SELECT company_id FROM idempotency_records WHERE expires_at <= p_now LIMIT p_limit
        ) expired $$;

REVOKE ALL ON FUNCTION oficina_idempotency_expired(timestamptz, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION oficina_idempotency_expired(timestamptz, integer) TO oficina_app;
