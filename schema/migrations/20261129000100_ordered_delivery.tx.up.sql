-- Ordered delivery per object (issue 27 item 4, decision 0039): an endpoint
-- with ordering 'object' gets the events of one object (a sale, a service
-- order, a client) in the order they were recorded, the next only once the
-- previous has succeeded or been given up.
--
-- order_key is the object's id (data.object.id) and order_seq its place,
-- both set when the delivery is recorded to an ordered endpoint (NULL
-- otherwise). order_seq comes from a sequence at insert time: every write
-- to an object holds its row's lock until commit and records its events
-- after changing the row, so for one object the sequence follows the
-- commit order. Neither column changes after insert and the index names
-- no column an outcome updates (status, attempts, times), so recording an
-- outcome stays a HOT update (decision 0028).
ALTER TABLE webhook_endpoints ADD COLUMN ordering text NOT NULL DEFAULT 'none' CHECK (ordering IN ('none', 'object'));

CREATE SEQUENCE webhook_delivery_order_seq AS bigint;
GRANT USAGE ON SEQUENCE webhook_delivery_order_seq TO oficina_app, oficina_worker;

ALTER TABLE webhook_deliveries ADD COLUMN order_key text;
ALTER TABLE webhook_deliveries ADD COLUMN order_seq bigint;
CREATE INDEX webhook_deliveries_order ON webhook_deliveries (company_id, endpoint_id, order_key, order_seq)
  WHERE order_key IS NOT NULL;
