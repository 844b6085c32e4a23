-- An attempt keeps what differs between the attempts of a delivery — the
-- request's headers (timestamp, signature), the answer, the timing — not the
-- request body again: that is the delivery's event body, kept once in
-- event_outbox, which the delivery log reads (issue 25 item 2).
ALTER TABLE webhook_attempts DROP COLUMN request_body, DROP COLUMN request_body_truncated;
