-- The companies a worker's batch scopes its transaction to (app.company_ids,
-- comma-separated; NULL outside one): the dispatcher's cycle functions set
-- it for the statement's companies and clear it after (decision 0031). The
-- worker_batch policies compare company_id with it, for the worker role only.
CREATE OR REPLACE FUNCTION oficina_batch_companies() RETURNS text[]
  LANGUAGE sql STABLE AS $$ SELECT string_to_array(NULLIF(current_setting('app.company_ids', true), ''), ',') $$;
