-- The claim of an Idempotency-Key, sent with the write's BEGIN
-- (idempotency.ClaimFirst): the key's advisory lock for the transaction, or
-- SQLSTATE OF409 when another request holds it (409
-- idempotency_in_progress), which ends the transaction before it did
-- anything.
CREATE OR REPLACE FUNCTION oficina_idempotency_claim(p_lock bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF NOT pg_try_advisory_xact_lock(p_lock) THEN
    RAISE EXCEPTION 'idempotency key in use by another request' USING ERRCODE = 'OF409';
  END IF;
END
$$;
