-- An idempotency record is bound to the API key that made it (issue 24 item
-- 2, decision 0010): a request under another key of the company (and not a
-- rotation of it) with the same Idempotency-Key is 422
-- idempotency_key_reused, never the stored answer, which was rendered for
-- the first key's permissions. Records made before this migration have no
-- key and are replayed to no key (422) for the rest of their 24 hours.
-- Keys are never deleted, so the link holds for as long as a record does.
ALTER TABLE idempotency_records ADD COLUMN api_key_id text,
  ADD FOREIGN KEY (company_id, api_key_id) REFERENCES api_keys (company_id, id);
