-- A write's stored response (idempotency.Save), replacing an expired record
-- of its key; false when a live record is in the way. p_api_key is the API
-- key that made it (decision 0010); the default keeps a caller of the
-- previous signature working during a rolling deploy (its records then
-- replay to no key).
--
-- PL/pgSQL so the session keeps the plan; SECURITY INVOKER, so row-level
-- security applies inside as outside.
CREATE OR REPLACE FUNCTION oficina_idempotency_save(p_company text, p_key text, p_hash bytea, p_method text, p_path text,
                                         p_status integer, p_headers jsonb, p_body bytea,
                                         p_created_at timestamptz, p_expires_at timestamptz,
                                         p_api_key text DEFAULT NULL) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  INSERT INTO public.idempotency_records AS r (company_id, idempotency_key, request_hash, method, path, status,
                                              headers, body, created_at, expires_at, api_key_id)
  VALUES (p_company, p_key, p_hash, p_method, p_path, p_status, p_headers, p_body, p_created_at, p_expires_at, p_api_key)
  ON CONFLICT (company_id, idempotency_key) DO UPDATE
     SET request_hash = EXCLUDED.request_hash, method = EXCLUDED.method, path = EXCLUDED.path,
         status = EXCLUDED.status, headers = EXCLUDED.headers, body = EXCLUDED.body,
         created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at, api_key_id = EXCLUDED.api_key_id
   WHERE r.expires_at <= EXCLUDED.created_at;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n = 1;
END
$$;
