-- Mutual TLS per endpoint (issue 27 item 2): the client certificate and its
-- key sealed with the signing secrets (PEM, a JSON object), its subject and
-- expiry in clear, which the endpoint shows.
ALTER TABLE webhook_endpoints ADD COLUMN sealed_client_certificate bytea;
ALTER TABLE webhook_endpoints ADD COLUMN client_certificate_subject text;
ALTER TABLE webhook_endpoints ADD COLUMN client_certificate_expires_at timestamptz;
