-- Clients (the company's customers and leads) and quotes: shared by service
-- orders, sales and lead capture.
CREATE TABLE clients (
  id                   text PRIMARY KEY,
  company_id           text NOT NULL REFERENCES companies(id),
  name                 text NOT NULL,
  email                text,
  phone                text,
  -- Normalised contacts for lead de-duplication (lower-case e-mail, phone
  -- digits with country code), unique per company.
  email_normalized     text,
  phone_normalized     text,
  document             text,
  status               text NOT NULL DEFAULT 'active' CHECK (status IN ('lead','active','inactive')),
  source               text,
  notes                text NOT NULL DEFAULT '',
  birth_date           date,
  next_follow_up       timestamptz,
  last_interaction_at  timestamptz,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX clients_company ON clients (company_id, id);
CREATE UNIQUE INDEX clients_email ON clients (company_id, email_normalized) WHERE email_normalized IS NOT NULL;
CREATE UNIQUE INDEX clients_phone ON clients (company_id, phone_normalized) WHERE phone_normalized IS NOT NULL;

CREATE TABLE quotes (
  id                      text PRIMARY KEY,
  company_id              text NOT NULL REFERENCES companies(id),
  number                  integer NOT NULL,
  client_id               text REFERENCES clients(id) ON DELETE SET NULL,
  client_name             text NOT NULL,
  status                  text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft','sent','approved','rejected','canceled','expired')),
  items                   jsonb NOT NULL DEFAULT '[]',  -- [{description, quantity, unit_price_cents, total_cents, product_id?, variation_id?}]
  subtotal_cents          bigint NOT NULL DEFAULT 0,
  discount_cents          bigint NOT NULL DEFAULT 0,
  additional_costs_cents  bigint NOT NULL DEFAULT 0,
  total_cents             bigint NOT NULL DEFAULT 0,
  recurring_total_cents   bigint NOT NULL DEFAULT 0,
  -- The payment plan used when converting to a sale (2.1): entry and installments.
  payment_plan            jsonb,
  notes                   text NOT NULL DEFAULT '',
  valid_until             timestamptz,
  approved_at             timestamptz,
  rejected_at             timestamptz,
  converted_order_id      text,
  converted_sale_id       text,
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now(),
  UNIQUE (company_id, number)
);
CREATE INDEX quotes_company ON quotes (company_id, id);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['clients','quotes'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant ON %I USING (company_id = oficina_company()) WITH CHECK (company_id = oficina_company())', t);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO oficina_app', t);
  END LOOP;
END
$$;

-- Per-company document numbers (orders, sales, quotes, receipts): the row
-- lock taken by the increment is held until the write commits, so numbers
-- have no gaps (a rolled-back write releases its number) and no duplicates.
CREATE TABLE company_counters (
  company_id  text NOT NULL REFERENCES companies(id),
  name        text NOT NULL,
  value       bigint NOT NULL,
  PRIMARY KEY (company_id, name)
);
ALTER TABLE company_counters ENABLE ROW LEVEL SECURITY;
ALTER TABLE company_counters FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant ON company_counters USING (company_id = oficina_company()) WITH CHECK (company_id = oficina_company());
GRANT SELECT, INSERT, UPDATE, DELETE ON company_counters TO oficina_app;
