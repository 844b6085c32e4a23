-- Dispatcher state kept on the endpoint (docs/dispatch.md):
-- failing_since: first failed attempt of the current run of failures (NULL
--   after a success); drives the 1-in-flight window and the auto-disable
--   after 3 days of failures only.
-- access_lost_notified_at: when the owners and admins were mailed that the
--   subscriber lost access; NULL again after a successful delivery, so the
--   next loss mails again (one e-mail per loss).
ALTER TABLE webhook_endpoints ADD COLUMN failing_since timestamptz;
ALTER TABLE webhook_endpoints ADD COLUMN access_lost_notified_at timestamptz;
