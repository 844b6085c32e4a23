-- Webhook signing secrets sealed at rest. The application seals each
-- secret with AES-256-GCM under OFICINA_SECRET_KEYS (schema/secretbox),
-- bound to its row and column; the database holds only the sealed bytes and
-- the id of the key that sealed them, never a secret it could hand out to a
-- backup, a replica or an injected SELECT.
--
-- Secrets written before this migration are kept, as bytes, with
-- secret_key_id NULL: "not sealed yet". Every process that holds the key
-- ring seals them at start (webhooks.Reseal, idempotent and safe with
-- several processes), after which no plaintext remains; nothing reads a row
-- with a NULL key id as a secret.

-- Random 32-byte secrets do not collide, and sealed values (random nonces)
-- cannot be compared anyway.
ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_secret_key;

ALTER TABLE webhook_endpoints RENAME COLUMN secret TO sealed_secret;
ALTER TABLE webhook_endpoints RENAME COLUMN previous_secret TO sealed_previous_secret;
ALTER TABLE webhook_endpoints
  ALTER COLUMN sealed_secret TYPE bytea USING convert_to(sealed_secret, 'UTF8'),
  ALTER COLUMN sealed_previous_secret TYPE bytea USING convert_to(sealed_previous_secret, 'UTF8'),
  ADD COLUMN secret_key_id text;

COMMENT ON COLUMN webhook_endpoints.sealed_secret IS
  'signing secret sealed by schema/secretbox under secret_key_id; bound to (company_id, id, column)';
COMMENT ON COLUMN webhook_endpoints.sealed_previous_secret IS
  'the previous secret during a rotation grace, sealed like sealed_secret';
COMMENT ON COLUMN webhook_endpoints.secret_key_id IS
  'id of the OFICINA_SECRET_KEYS key that sealed both secrets; NULL: written before sealing, sealed at start';

-- The start-up step looks for rows not sealed yet on every start.
CREATE INDEX webhook_endpoints_unsealed ON webhook_endpoints (company_id) WHERE secret_key_id IS NULL;

-- Companies with endpoints whose secrets are not sealed under p_key_id,
-- after p_after in id order: the door of the start-up step (p_key_id NULL:
-- rows not sealed at all) and of `oficina admin secrets rekey` (p_key_id the
-- ring's first key: every row under another key, or none). Like the other
-- doors it answers company ids only, to the worker role only, and belongs to
-- oficina_definer (trust_boundaries); the rows are then read and re-sealed
-- under each company's policy (tenant.Tx).
GRANT SELECT ON webhook_endpoints TO oficina_definer;
CREATE POLICY definer_reads ON webhook_endpoints FOR SELECT TO oficina_definer USING (true);

CREATE FUNCTION oficina_secret_companies(p_key_id text, p_after text, p_limit integer) RETURNS SETOF text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT DISTINCT company_id FROM public.webhook_endpoints
   WHERE (secret_key_id IS NULL OR secret_key_id <> p_key_id) AND company_id > p_after
   ORDER BY company_id LIMIT p_limit $$;

ALTER FUNCTION oficina_secret_companies(text, text, integer) OWNER TO oficina_definer;
REVOKE ALL ON FUNCTION oficina_secret_companies(text, text, integer) FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_secret_companies(text, text, integer) TO oficina_worker;
