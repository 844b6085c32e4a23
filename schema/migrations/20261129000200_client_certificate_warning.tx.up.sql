-- The warning before a client certificate expires (issue 27 item 2): when
-- webhook_endpoint.client_certificate_expiring was sent for the certificate
-- set now, so it is sent once per certificate (a new one clears it). The
-- routine looks for the certificates still to warn about across companies
-- (oficina_expiring_certificate_companies): this index holds those only.
ALTER TABLE webhook_endpoints ADD COLUMN client_certificate_warned_at timestamptz;
CREATE INDEX webhook_endpoints_certificate_to_warn ON webhook_endpoints (client_certificate_expires_at)
  WHERE client_certificate_expires_at IS NOT NULL AND client_certificate_warned_at IS NULL;
