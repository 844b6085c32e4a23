-- Finance: accounts and financial transactions (receivables, received
-- payments, revenue). Sales and service orders post here.
CREATE TABLE finance_accounts (
  id                     text PRIMARY KEY,
  company_id             text NOT NULL REFERENCES companies(id),
  name                   text NOT NULL,
  kind                   text NOT NULL DEFAULT 'checking' CHECK (kind IN ('checking','savings','cash','credit_card','other')),
  is_default             boolean NOT NULL DEFAULT false,
  opening_balance_cents  bigint NOT NULL DEFAULT 0,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX finance_accounts_company ON finance_accounts (company_id, id);
CREATE UNIQUE INDEX finance_accounts_default ON finance_accounts (company_id) WHERE is_default;

CREATE TABLE financial_transactions (
  id                 text PRIMARY KEY,
  company_id         text NOT NULL REFERENCES companies(id),
  account_id         text REFERENCES finance_accounts(id),
  kind               text NOT NULL CHECK (kind IN ('income','expense')),
  status             text NOT NULL DEFAULT 'open' CHECK (status IN ('open','paid','canceled')),
  description        text NOT NULL DEFAULT '',
  amount_cents       bigint NOT NULL CHECK (amount_cents >= 0),
  transaction_date   date NOT NULL,
  due_date           date,
  payment_date       date,
  -- Origin links: at most one of these is set.
  sale_id            text,
  installment_id     text,
  payment_id         text,
  service_order_id   text,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX financial_transactions_company ON financial_transactions (company_id, id);
CREATE INDEX financial_transactions_sale ON financial_transactions (company_id, sale_id) WHERE sale_id IS NOT NULL;
CREATE INDEX financial_transactions_order ON financial_transactions (company_id, service_order_id) WHERE service_order_id IS NOT NULL;

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['finance_accounts','financial_transactions'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant ON %I USING (company_id = oficina_company()) WITH CHECK (company_id = oficina_company())', t);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO oficina_app', t);
  END LOOP;
END
$$;
