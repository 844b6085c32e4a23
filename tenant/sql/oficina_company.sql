-- The company of the current transaction (tenant.Tx sets app.company_id),
-- or NULL outside one: every company table's row-level security policy
-- compares company_id with it.
CREATE OR REPLACE FUNCTION oficina_company() RETURNS text
  LANGUAGE sql STABLE AS $$ SELECT NULLIF(current_setting('app.company_id', true), '') $$;
