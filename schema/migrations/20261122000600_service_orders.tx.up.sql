-- Service orders (issue 6): the orders themselves, the company's order
-- settings (required fields, technician completion order, monthly quota),
-- automatic checklists, calendar appointments with their external-calendar
-- mirrors, and the notifications outbox of the messaging channel.

-- Per-company order settings; a company without a row uses the defaults
-- (no required fields, no completion order, the plan's monthly quota).
CREATE TABLE service_order_settings (
  company_id                   text PRIMARY KEY REFERENCES companies(id),
  -- Fields the company requires on creation, e.g. {technician_id,service_address}.
  required_fields              text[] NOT NULL DEFAULT '{}',
  technician_completion_order  text NOT NULL DEFAULT 'none'
                               CHECK (technician_completion_order IN ('none','any','support_first')),
  -- NULL: the plan's default monthly quota.
  monthly_order_quota          integer CHECK (monthly_order_quota >= 0),
  order_quota_unlimited        boolean NOT NULL DEFAULT false,
  created_at                   timestamptz NOT NULL DEFAULT now(),
  updated_at                   timestamptz NOT NULL DEFAULT now()
);

-- Automatic checklists: applied to every new order (of their type, when one
-- is set) while active.
CREATE TABLE service_order_checklists (
  id          text PRIMARY KEY,
  company_id  text NOT NULL REFERENCES companies(id),
  name        text NOT NULL,
  active      boolean NOT NULL DEFAULT true,
  type_id     text REFERENCES service_order_types(id),
  items       jsonb NOT NULL DEFAULT '[]',  -- [{description, required}]
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX service_order_checklists_company ON service_order_checklists (company_id, id);

-- Calendar appointments. The order link is deferred so an order and its
-- appointment can be inserted in one transaction in either order.
CREATE TABLE appointments (
  id                text PRIMARY KEY,
  company_id        text NOT NULL REFERENCES companies(id),
  title             text NOT NULL,
  status            text NOT NULL DEFAULT 'scheduled' CHECK (status IN ('scheduled','confirmed','completed','canceled')),
  starts_at         timestamptz NOT NULL,
  ends_at           timestamptz NOT NULL,
  service_order_id  text,
  client_id         text REFERENCES clients(id) ON DELETE SET NULL,
  member_ids        text[] NOT NULL DEFAULT '{}',
  price_cents       bigint,
  created_by        text REFERENCES members(id) ON DELETE SET NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX appointments_company ON appointments (company_id, id);

-- External calendars members connected (Google, Outlook, CalDAV).
CREATE TABLE calendar_connections (
  id                    text PRIMARY KEY,
  company_id            text NOT NULL REFERENCES companies(id),
  member_id             text NOT NULL REFERENCES members(id) ON DELETE CASCADE,
  provider              text NOT NULL CHECK (provider IN ('google','outlook','caldav')),
  external_calendar_id  text NOT NULL,
  active                boolean NOT NULL DEFAULT true,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX calendar_connections_member ON calendar_connections (company_id, member_id) WHERE active;

-- One row per appointment copy to push to a connected calendar; a calendar
-- sync worker drains status 'pending'.
CREATE TABLE appointment_calendar_mirrors (
  id                    text PRIMARY KEY,
  company_id            text NOT NULL REFERENCES companies(id),
  appointment_id        text NOT NULL REFERENCES appointments(id) ON DELETE CASCADE,
  connection_id         text NOT NULL REFERENCES calendar_connections(id) ON DELETE CASCADE,
  member_id             text NOT NULL REFERENCES members(id) ON DELETE CASCADE,
  provider              text NOT NULL,
  external_calendar_id  text NOT NULL,
  status                text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','synced','failed')),
  external_event_id     text,
  created_at            timestamptz NOT NULL DEFAULT now(),
  synced_at             timestamptz
);
CREATE INDEX appointment_calendar_mirrors_appointment ON appointment_calendar_mirrors (company_id, appointment_id);
CREATE INDEX appointment_calendar_mirrors_pending ON appointment_calendar_mirrors (created_at) WHERE status = 'pending';

CREATE TABLE service_orders (
  id                      text PRIMARY KEY,
  company_id              text NOT NULL REFERENCES companies(id),
  number                  bigint NOT NULL,
  status                  text NOT NULL CHECK (status IN ('pending','scheduled','in_progress','completed','canceled')),
  client_id               text REFERENCES clients(id) ON DELETE SET NULL,
  client_name             text NOT NULL,
  client_phone            text NOT NULL DEFAULT '',
  client_description      text NOT NULL DEFAULT '',
  service_address         text NOT NULL DEFAULT '',
  type_id                 text REFERENCES service_order_types(id),
  -- Deleting a member clears the link without an order event (6.3 rule 7).
  technician_id           text REFERENCES members(id) ON DELETE SET NULL,
  support_technician_ids  text[] NOT NULL DEFAULT '{}',
  scheduled_start         timestamptz,
  scheduled_end           timestamptz,
  started_at              timestamptz,
  completed_at            timestamptz,
  canceled_at             timestamptz,
  priority                text NOT NULL DEFAULT 'medium' CHECK (priority IN ('low','medium','high','urgent')),
  internal_notes          text NOT NULL DEFAULT '',
  items                   jsonb NOT NULL DEFAULT '[]',  -- [{description, quantity, unit_price_cents, total_cents}]
  subtotal_cents          bigint NOT NULL DEFAULT 0,
  discount_cents          bigint NOT NULL DEFAULT 0,
  additional_costs_cents  bigint NOT NULL DEFAULT 0,
  total_cents             bigint NOT NULL DEFAULT 0,
  -- Items of the automatic checklists applied on creation, ticked in the dashboard.
  checklist               jsonb NOT NULL DEFAULT '[]',  -- [{id, checklist_id, description, required, done, done_at}]
  -- Technicians' "my part is done" marks, in the order they were made.
  technician_completions  jsonb NOT NULL DEFAULT '[]',  -- [{technician_id, completed_at}]
  appointment_id          text REFERENCES appointments(id) ON DELETE SET NULL,
  quote_id                text REFERENCES quotes(id) ON DELETE SET NULL,
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now(),
  UNIQUE (company_id, number)
);
CREATE INDEX service_orders_company ON service_orders (company_id, id);
CREATE INDEX service_orders_client ON service_orders (company_id, client_id) WHERE client_id IS NOT NULL;
CREATE INDEX service_orders_technician ON service_orders (company_id, technician_id) WHERE technician_id IS NOT NULL;
CREATE INDEX service_orders_support ON service_orders USING gin (support_technician_ids);

ALTER TABLE appointments ADD CONSTRAINT appointments_service_order_fk
  FOREIGN KEY (service_order_id) REFERENCES service_orders(id) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED;

-- The messaging channel's outbox: a sender (WhatsApp or similar) drains
-- status 'pending' rows after the write committed; docs/api.md describes it.
CREATE TABLE notifications (
  id                   text PRIMARY KEY,
  company_id           text NOT NULL REFERENCES companies(id),
  channel              text NOT NULL DEFAULT 'messaging',
  recipient_member_id  text NOT NULL REFERENCES members(id) ON DELETE CASCADE,
  template             text NOT NULL,
  subject_type         text NOT NULL,
  subject_id           text NOT NULL,
  payload              jsonb NOT NULL DEFAULT '{}',
  status               text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','sent','failed')),
  created_at           timestamptz NOT NULL DEFAULT now(),
  sent_at              timestamptz
);
CREATE INDEX notifications_subject ON notifications (company_id, subject_id);
CREATE INDEX notifications_pending ON notifications (created_at) WHERE status = 'pending';

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['service_order_settings','service_order_checklists','appointments','calendar_connections',
                           'appointment_calendar_mirrors','service_orders','notifications'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant ON %I USING (company_id = oficina_company()) WITH CHECK (company_id = oficina_company())', t);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO oficina_app', t);
  END LOOP;
END
$$;
