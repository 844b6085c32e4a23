-- Foundation: companies, members, API keys, service order types.
-- Every company-owned table has company_id and row-level security ENABLED and
-- FORCED; the service connects as oficina_app (neither superuser nor
-- BYPASSRLS), so a query outside the company transaction sees no rows.
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'oficina_app') THEN
    CREATE ROLE oficina_app LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
  END IF;
END
$$;

CREATE FUNCTION oficina_company() RETURNS text
  LANGUAGE sql STABLE AS $$ SELECT NULLIF(current_setting('app.company_id', true), '') $$;

CREATE TABLE companies (
  id                     text PRIMARY KEY,
  name                   text NOT NULL,
  plan                   text NOT NULL DEFAULT 'start' CHECK (plan IN ('free','start','pleno','supra')),
  subscription_status    text NOT NULL DEFAULT 'active' CHECK (subscription_status IN ('active','trialing','past_due','unpaid','canceled')),
  status                 text NOT NULL DEFAULT 'active' CHECK (status IN ('active','suspended')),
  api_enabled            boolean NOT NULL DEFAULT true,
  timezone               text NOT NULL DEFAULT 'America/Sao_Paulo',
  currency               text NOT NULL DEFAULT 'BRL',
  -- NULL: the plan's ceiling; rate_limit_unlimited: no ceiling at all.
  rate_limit_override    integer CHECK (rate_limit_override > 0),
  rate_limit_unlimited   boolean NOT NULL DEFAULT false,
  settings               jsonb NOT NULL DEFAULT '{}',
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE members (
  id           text PRIMARY KEY,
  company_id   text NOT NULL REFERENCES companies(id),
  name         text NOT NULL,
  email        text NOT NULL DEFAULT '',
  role         text NOT NULL CHECK (role IN ('OWNER','ADMIN','MEMBER','VIEWER')),
  type         text NOT NULL DEFAULT 'org_member' CHECK (type IN ('org_member','technician','seller','assistant')),
  -- module -> actions ticked in the member's profile, e.g. {"sales":["read","create"]}
  permissions  jsonb NOT NULL DEFAULT '{}',
  status       text NOT NULL DEFAULT 'active' CHECK (status IN ('active','suspended','removed')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX members_company ON members (company_id, id);

CREATE TABLE api_keys (
  id              text PRIMARY KEY,
  company_id      text NOT NULL REFERENCES companies(id),
  member_id       text NOT NULL REFERENCES members(id),
  created_by      text NOT NULL REFERENCES members(id),
  name            text NOT NULL DEFAULT '',
  display_prefix  text NOT NULL,
  secret_hash     bytea NOT NULL UNIQUE,
  permissions     text[] NOT NULL,
  allowed_cidrs   cidr[] NOT NULL DEFAULT '{}',
  expires_at      timestamptz,
  revoked_at      timestamptz,
  revoked_reason  text,
  replaced_by     text REFERENCES api_keys(id),
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_keys_company ON api_keys (company_id, id);

CREATE TABLE service_order_types (
  id                  text PRIMARY KEY,
  company_id          text NOT NULL REFERENCES companies(id),
  name                text NOT NULL,
  active              boolean NOT NULL DEFAULT true,
  required_on_create  boolean NOT NULL DEFAULT false,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX service_order_types_company ON service_order_types (company_id, id);

ALTER TABLE companies ENABLE ROW LEVEL SECURITY;
ALTER TABLE companies FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant ON companies USING (id = oficina_company()) WITH CHECK (id = oficina_company());

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['members','api_keys','service_order_types'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant ON %I USING (company_id = oficina_company()) WITH CHECK (company_id = oficina_company())', t);
  END LOOP;
END
$$;

-- Authentication must find a key before the company is known. This definer
-- function is the one door through RLS: it answers only which company owns a
-- hash, and the rest of the key is read under that company's policy.
CREATE FUNCTION oficina_key_company(p_hash bytea) RETURNS text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public
  AS $$ SELECT company_id FROM api_keys WHERE secret_hash = p_hash $$;

REVOKE ALL ON FUNCTION oficina_key_company(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION oficina_key_company(bytea) TO oficina_app;
GRANT USAGE ON SCHEMA public TO oficina_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON companies, members, api_keys, service_order_types TO oficina_app;
