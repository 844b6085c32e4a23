-- Sales (issue 7): the product catalogue with variations and its stock
-- ledger, services, the company's sales settings (finance posting, monthly
-- quota), sales with their items per version, installments, payments and
-- their allocation to installments, version history and invoices; finance
-- transactions gain receivable amounts.
--
-- Foreign keys are kept where they guard a parent written elsewhere, and
-- left out on rows every sale writes against shared rows (the company, the
-- popular products, the default account): each such check takes a KEY SHARE
-- lock on that row, and many concurrent sales sharing one row turn those
-- locks into multixacts. Child rows reach their company through their
-- parent and row-level security; the code checks the references.

CREATE TABLE products (
  id                       text PRIMARY KEY,
  company_id               text NOT NULL REFERENCES companies(id),
  name                     text NOT NULL,
  sku                      text,
  price_cents              bigint NOT NULL DEFAULT 0 CHECK (price_cents >= 0),
  promotional_price_cents  bigint CHECK (promotional_price_cents >= 0),
  -- Stock of a product without variations (each variation keeps its own).
  stock_quantity           bigint NOT NULL DEFAULT 0,
  active                   boolean NOT NULL DEFAULT true,
  created_at               timestamptz NOT NULL DEFAULT now(),
  updated_at               timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX products_company ON products (company_id, id);
CREATE UNIQUE INDEX products_sku ON products (company_id, sku) WHERE sku IS NOT NULL;

CREATE TABLE product_variations (
  id                       text PRIMARY KEY,
  company_id               text NOT NULL,
  product_id               text NOT NULL REFERENCES products(id) ON DELETE CASCADE,
  name                     text NOT NULL,
  sku                      text,
  price_cents              bigint NOT NULL DEFAULT 0 CHECK (price_cents >= 0),
  promotional_price_cents  bigint CHECK (promotional_price_cents >= 0),
  stock_quantity           bigint NOT NULL DEFAULT 0,
  position                 integer NOT NULL DEFAULT 0,
  created_at               timestamptz NOT NULL DEFAULT now(),
  updated_at               timestamptz NOT NULL DEFAULT now(),
  UNIQUE (product_id, name)
);
CREATE INDEX product_variations_product ON product_variations (company_id, product_id, position);
CREATE UNIQUE INDEX product_variations_sku ON product_variations (company_id, sku) WHERE sku IS NOT NULL;

CREATE TABLE services (
  id                text PRIMARY KEY,
  company_id        text NOT NULL REFERENCES companies(id),
  name              text NOT NULL,
  base_price_cents  bigint NOT NULL DEFAULT 0 CHECK (base_price_cents >= 0),
  active            boolean NOT NULL DEFAULT true,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX services_company ON services (company_id, id);

-- Per-company sales settings; a company without a row uses the defaults
-- (sales posted to finance, the plan's monthly quota).
CREATE TABLE sales_settings (
  company_id            text PRIMARY KEY REFERENCES companies(id),
  track_in_finance      boolean NOT NULL DEFAULT true,
  -- NULL: the plan's default monthly quota.
  monthly_sale_quota    integer CHECK (monthly_sale_quota >= 0),
  sale_quota_unlimited  boolean NOT NULL DEFAULT false,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE sales (
  id                       text PRIMARY KEY,
  company_id               text NOT NULL REFERENCES companies(id),
  -- Taken last in the creating transaction (see schema/sales), so the
  -- per-company counter stays locked as briefly as possible.
  number                   bigint,
  version                  integer NOT NULL DEFAULT 1,
  client_id                text REFERENCES clients(id) ON DELETE SET NULL,
  seller_id                text REFERENCES members(id),
  quote_id                 text REFERENCES quotes(id) ON DELETE SET NULL,
  contract_id              text,
  payment_status           text NOT NULL CHECK (payment_status IN ('pending','partial','paid')),
  overdue                  boolean NOT NULL DEFAULT false,
  subtotal_cents           bigint NOT NULL,
  discount_cents           bigint NOT NULL DEFAULT 0,
  shipping_cents           bigint NOT NULL DEFAULT 0,
  additional_costs_cents   bigint NOT NULL DEFAULT 0,
  total_cents              bigint NOT NULL CHECK (total_cents >= 0),
  paid_cents               bigint NOT NULL DEFAULT 0 CHECK (paid_cents >= 0 AND paid_cents <= total_cents),
  payment_plan             jsonb NOT NULL,
  account_id               text,
  track_in_finance         boolean NOT NULL,
  decrement_stock          boolean NOT NULL,
  sale_date                date NOT NULL,
  estimated_delivery_date  timestamptz,
  notes                    text NOT NULL DEFAULT '',
  production_status        text CHECK (production_status IN ('pending','in_production','ready','delivered')),
  production_notes         text NOT NULL DEFAULT '',
  invoice_locked           boolean NOT NULL DEFAULT false,
  commission_paid_at       timestamptz,
  canceled_at              timestamptz,
  cancel_reason            text,
  -- Copies of the current items, the installments and the payments (with
  -- their allocations) as JSON arrays of their rows, kept by every write,
  -- so reading a sale is one row (the child tables stay the truth).
  items_doc                jsonb NOT NULL DEFAULT '[]',
  installments_doc         jsonb NOT NULL DEFAULT '[]',
  payments_doc             jsonb NOT NULL DEFAULT '[]',
  created_at               timestamptz NOT NULL DEFAULT now(),
  updated_at               timestamptz NOT NULL DEFAULT now(),
  UNIQUE (company_id, number)
);
CREATE INDEX sales_company ON sales (company_id, id);
CREATE INDEX sales_company_created ON sales (company_id, created_at);
CREATE INDEX sales_company_date ON sales (company_id, sale_date);

-- Items of every version: the current ones have version = sales.version.
CREATE TABLE sale_items (
  id                    text PRIMARY KEY,
  company_id            text NOT NULL,
  sale_id               text NOT NULL REFERENCES sales(id) DEFERRABLE INITIALLY DEFERRED,
  version               integer NOT NULL,
  position              integer NOT NULL,
  type                  text NOT NULL CHECK (type IN ('custom','catalog')),
  name                  text NOT NULL,
  quantity              bigint NOT NULL CHECK (quantity > 0),
  unit_price_cents      bigint NOT NULL,
  original_price_cents  bigint NOT NULL,
  total_price_cents     bigint NOT NULL,
  -- Cleared when the product (or variation) is deleted (spec 6.3 rule 7,
  -- schema/products does it).
  product_id            text,
  variation_id          text
);
CREATE INDEX sale_items_sale ON sale_items (sale_id, version, position);
CREATE INDEX sale_items_product ON sale_items (product_id) WHERE product_id IS NOT NULL;
CREATE INDEX sale_items_variation ON sale_items (variation_id) WHERE variation_id IS NOT NULL;

CREATE TABLE sale_installments (
  id            text PRIMARY KEY,
  company_id    text NOT NULL,
  sale_id       text NOT NULL REFERENCES sales(id) DEFERRABLE INITIALLY DEFERRED,
  kind          text NOT NULL CHECK (kind IN ('upfront','entry','installment')),
  amount_cents  bigint NOT NULL CHECK (amount_cents > 0),
  paid_cents    bigint NOT NULL DEFAULT 0 CHECK (paid_cents >= 0 AND paid_cents <= amount_cents),
  due_date      date NOT NULL,
  paid_date     date,
  status        text NOT NULL CHECK (status IN ('open','overdue','paid','canceled')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sale_installments_sale ON sale_installments (sale_id, due_date);
CREATE INDEX sale_installments_open ON sale_installments (company_id, due_date) WHERE status = 'open';

CREATE TABLE sale_payments (
  id                  text PRIMARY KEY,
  company_id          text NOT NULL,
  sale_id             text NOT NULL REFERENCES sales(id) DEFERRABLE INITIALLY DEFERRED,
  amount_cents        bigint NOT NULL CHECK (amount_cents > 0),
  paid_at             date NOT NULL,
  payment_method      text CHECK (payment_method IN ('pix','credit_card','debit_card','cash','boleto','transfer','other')),
  account_id          text,
  receipt_number      text,
  has_active_invoice  boolean NOT NULL DEFAULT false,
  canceled_at         timestamptz,
  cancel_reason       text,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sale_payments_sale ON sale_payments (sale_id, created_at);

-- How each payment was applied to installments.
CREATE TABLE sale_payment_allocations (
  company_id      text NOT NULL,
  payment_id      text NOT NULL REFERENCES sale_payments(id) DEFERRABLE INITIALLY DEFERRED,
  installment_id  text NOT NULL REFERENCES sale_installments(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
  amount_cents    bigint NOT NULL CHECK (amount_cents > 0),
  PRIMARY KEY (payment_id, installment_id)
);
CREATE INDEX sale_payment_allocations_installment ON sale_payment_allocations (installment_id);

-- One row per version (version 1 written at creation).
CREATE TABLE sale_versions (
  id                      text PRIMARY KEY,
  company_id              text NOT NULL,
  sale_id                 text NOT NULL REFERENCES sales(id) DEFERRABLE INITIALLY DEFERRED,
  version                 integer NOT NULL,
  reason                  text,
  client_id               text,
  seller_id               text,
  subtotal_cents          bigint NOT NULL,
  discount_cents          bigint NOT NULL,
  shipping_cents          bigint NOT NULL,
  additional_costs_cents  bigint NOT NULL,
  total_cents             bigint NOT NULL,
  payment_plan            jsonb NOT NULL,
  created_at              timestamptz NOT NULL DEFAULT now(),
  UNIQUE (sale_id, version)
);

-- Invoices issued in the dashboard, for a whole sale or for one payment.
CREATE TABLE sale_invoices (
  id           text PRIMARY KEY,
  company_id   text NOT NULL,
  sale_id      text NOT NULL REFERENCES sales(id),
  payment_id   text REFERENCES sale_payments(id),
  status       text NOT NULL CHECK (status IN ('issued','canceled')),
  issued_at    timestamptz NOT NULL,
  canceled_at  timestamptz
);
CREATE INDEX sale_invoices_sale ON sale_invoices (sale_id);

-- The stock ledger. Deleting a product deletes its movements (6.3 rule 7,
-- schema/products does it).
CREATE TABLE stock_movements (
  id             text PRIMARY KEY,
  company_id     text NOT NULL,
  product_id     text NOT NULL,
  variation_id   text,
  quantity       bigint NOT NULL CHECK (quantity <> 0),
  balance_after  bigint NOT NULL,
  reason         text NOT NULL CHECK (reason IN ('adjustment','sale','sale_version','sale_canceled')),
  sale_id        text REFERENCES sales(id) DEFERRABLE INITIALLY DEFERRED,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX stock_movements_product ON stock_movements (company_id, product_id, id);
CREATE INDEX stock_movements_sale ON stock_movements (sale_id) WHERE sale_id IS NOT NULL;

-- Finance: a sale's receivable keeps the installment's amount as
-- original_amount_cents while amount_cents is what is still to receive; a
-- receivable fully covered by received payments is 'settled'.
ALTER TABLE financial_transactions ADD COLUMN original_amount_cents bigint;
ALTER TABLE financial_transactions DROP CONSTRAINT financial_transactions_status_check;
ALTER TABLE financial_transactions ADD CONSTRAINT financial_transactions_status_check
  CHECK (status IN ('open','paid','settled','canceled'));
CREATE INDEX financial_transactions_installment ON financial_transactions (installment_id) WHERE installment_id IS NOT NULL;
CREATE INDEX financial_transactions_payment ON financial_transactions (payment_id) WHERE payment_id IS NOT NULL;

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['products','product_variations','services','sales_settings','sales','sale_items',
    'sale_installments','sale_payments','sale_payment_allocations','sale_versions','sale_invoices','stock_movements'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant ON %I USING (company_id = oficina_company()) WITH CHECK (company_id = oficina_company())', t);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO oficina_app', t);
  END LOOP;
END
$$;

-- Rebuilds a sale's documents from its child tables, for writes that change
-- children outside the sale's own write path (invoice flags, receipt
-- numbers, a deleted product clearing product_id). Runs as the caller, so
-- row-level security applies.
CREATE FUNCTION oficina_sale_refresh_docs(p_sale text) RETURNS void
  LANGUAGE sql AS $$
  UPDATE sales s SET
    items_doc = (SELECT coalesce(jsonb_agg(to_jsonb(i) ORDER BY i.position), '[]') FROM sale_items i
      WHERE i.sale_id = s.id AND i.version = s.version),
    installments_doc = (SELECT coalesce(jsonb_agg(to_jsonb(n) ORDER BY n.due_date, n.id), '[]') FROM sale_installments n
      WHERE n.sale_id = s.id),
    payments_doc = (SELECT coalesce(jsonb_agg(to_jsonb(y) || jsonb_build_object('allocations',
        (SELECT coalesce(jsonb_agg(to_jsonb(a)), '[]') FROM sale_payment_allocations a WHERE a.payment_id = y.id))
      ORDER BY y.created_at, y.id), '[]') FROM sale_payments y WHERE y.sale_id = s.id)
  WHERE s.id = p_sale $$;
GRANT EXECUTE ON FUNCTION oficina_sale_refresh_docs(text) TO oficina_app;

-- The daily overdue routine runs for every company: this definer function
-- is its one door through row-level security and answers only which
-- companies have installments past due in their own time zone at p_now.
CREATE FUNCTION oficina_sales_overdue_companies(p_now timestamptz) RETURNS SETOF text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public
  AS $$ SELECT DISTINCT i.company_id FROM sale_installments i JOIN companies c ON c.id = i.company_id
        WHERE i.status = 'open' AND i.due_date < (p_now AT TIME ZONE c.timezone)::date $$;
REVOKE ALL ON FUNCTION oficina_sales_overdue_companies(timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION oficina_sales_overdue_companies(timestamptz) TO oficina_app;
