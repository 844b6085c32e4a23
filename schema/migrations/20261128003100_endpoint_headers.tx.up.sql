-- Custom headers per endpoint (issue 27 item 2): the names in clear (the
-- endpoint shows them), the values sealed with the signing secrets, under
-- the same key (secret_key_id) — a JSON object {name: value}.
ALTER TABLE webhook_endpoints ADD COLUMN header_names text[] NOT NULL DEFAULT '{}';
ALTER TABLE webhook_endpoints ADD COLUMN sealed_headers bytea;
