-- A dispatcher cycle reads and records many companies' deliveries at once.
-- Scoping each company in turn (set_config, then the statements again) cost
-- a cycle its statements once per company: about 0.6 ms a company, most of
-- a cycle (decision 0031). The worker role may instead scope a transaction
-- to a list of companies, app.company_ids, which only its cycle functions
-- set and clear: the same rows it could reach one company at a time with
-- app.company_id, in one statement. The request role is unaffected.
CREATE OR REPLACE FUNCTION oficina_batch_companies() RETURNS text[]
  LANGUAGE sql STABLE AS $$ SELECT string_to_array(NULLIF(current_setting('app.company_ids', true), ''), ',') $$;

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['webhook_deliveries', 'webhook_attempts', 'webhook_endpoints', 'api_keys', 'members'] LOOP
    EXECUTE format('CREATE POLICY worker_batch ON %I TO oficina_worker USING (company_id = ANY (oficina_batch_companies())) '
                   'WITH CHECK (company_id = ANY (oficina_batch_companies()))', t);
  END LOOP;
END $$;
CREATE POLICY worker_batch ON companies FOR SELECT TO oficina_worker USING (id = ANY (oficina_batch_companies()));
