-- A write's stored response sent with its COMMIT (idempotency.Keep): as
-- oficina_idempotency_save, but a live record in the way raises SQLSTATE
-- OF208, which aborts the transaction and skips the COMMIT after it; the
-- caller then replays the earlier answer from a new transaction.
CREATE OR REPLACE FUNCTION oficina_idempotency_keep(p_company text, p_key text, p_hash bytea, p_method text, p_path text,
                                         p_status integer, p_headers jsonb, p_body bytea,
                                         p_created_at timestamptz, p_expires_at timestamptz,
                                         p_api_key text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF NOT oficina_idempotency_save(p_company, p_key, p_hash, p_method, p_path, p_status, p_headers, p_body,
                                  p_created_at, p_expires_at, p_api_key) THEN
    RAISE EXCEPTION 'idempotency key already answered' USING ERRCODE = 'OF208';
  END IF;
END
$$;
