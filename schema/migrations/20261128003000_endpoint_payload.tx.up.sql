-- Thin events per endpoint (issue 26 item 3): 'thin' sends data.object as
-- {object, id} with changed_fields; GET /events/{id} has the full envelope.
ALTER TABLE webhook_endpoints ADD COLUMN payload text NOT NULL DEFAULT 'full' CHECK (payload IN ('full', 'thin'));
