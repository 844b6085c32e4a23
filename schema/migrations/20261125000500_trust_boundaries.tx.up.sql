-- Database trust boundaries (issue 15 item 3, docs/security.md):
--   * oficina_worker, the role of the relay, the dispatchers and the
--     sweepers: everything the request role may do, plus the cross-company
--     functions, which the request role may no longer call;
--   * oficina_definer, a NOLOGIN role that owns the SECURITY DEFINER
--     functions instead of the superuser; it reads, through policies of its
--     own, only the tables those functions read; the functions search
--     pg_temp last, so a temporary table cannot stand in for a real one;
--   * no app role creates temporary tables or objects in public;
--   * links between rows are same-company foreign keys: a parent is unique
--     on (company_id, id) and its children reference (company_id, x_id), so
--     the database refuses a row of one company pointing at another's.

DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'oficina_worker') THEN
    CREATE ROLE oficina_worker LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE INHERIT;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'oficina_definer') THEN
    CREATE ROLE oficina_definer NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOINHERIT;
  END IF;
END
$$;

GRANT oficina_app TO oficina_worker;

-- No temporary tables (they would shadow tables in an unqualified name) and
-- nothing created in public by the app roles.
DO $$ BEGIN
  EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
  EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM oficina_app, oficina_worker', current_database());
END $$;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;

-- The definer reads what its functions read, under policies of its own
-- (the tables FORCE row-level security; it has no BYPASSRLS).
GRANT USAGE ON SCHEMA public TO oficina_definer;
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['api_keys', 'idempotency_records', 'event_outbox', 'webhook_deliveries', 'mail_outbox',
                           'sale_installments', 'companies'] LOOP
    EXECUTE format('GRANT SELECT ON %I TO oficina_definer', t);
    EXECUTE format('CREATE POLICY definer_reads ON %I FOR SELECT TO oficina_definer USING (true)', t);
  END LOOP;
END $$;

DO $$
DECLARE f regprocedure;
BEGIN
  FOR f IN SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = 'public' AND p.proname LIKE 'oficina\_%' AND p.prosecdef LOOP
    EXECUTE format('ALTER FUNCTION %s OWNER TO oficina_definer', f);
    EXECUTE format('ALTER FUNCTION %s SET search_path = public, pg_temp', f);
  END LOOP;
END $$;

-- Cross-company functions: the workers' only.
DO $$
DECLARE f text;
BEGIN
  FOREACH f IN ARRAY ARRAY[
    'oficina_idempotency_expired(timestamptz, integer)',
    'oficina_unpublished_companies(timestamptz, integer)',
    'oficina_expired_companies(timestamptz, integer)',
    'oficina_mail_companies(timestamptz, integer)',
    'oficina_sales_overdue_companies(timestamptz)',
    'oficina_dispatch_views(text[], text[], text[])',
    'oficina_dispatch_succeeded(text[], text[], text[], text[], timestamptz[], integer[], timestamptz)'] LOOP
    EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC, oficina_app', f);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO oficina_worker', f);
  END LOOP;
END $$;

-- The dispatcher's batch functions scope each company's rows with
-- set_config; they now give the caller's transaction its company back.
CREATE OR REPLACE FUNCTION oficina_dispatch_views(p_companies text[], p_deliveries text[], p_endpoints text[])
RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  caller text := current_setting('app.company_id', true);
  c text;
  v jsonb;
  result jsonb := '{}';
BEGIN
  FOR c IN SELECT DISTINCT x FROM unnest(p_companies) AS x ORDER BY x LOOP
    PERFORM set_config('app.company_id', c, true);
    WITH r AS (
      SELECT r.delivery, r.endpoint FROM unnest(p_companies, p_deliveries, p_endpoints) AS r(company, delivery, endpoint)
       WHERE r.company = c
    ), e AS (
      SELECT * FROM public.webhook_endpoints WHERE id IN (SELECT endpoint FROM r)
    ), k AS (
      SELECT * FROM public.api_keys WHERE id IN (SELECT subscriber_key_id FROM e)
    )
    SELECT jsonb_build_object(
      'deliveries', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', d.id, 'status', d.status, 'event_type', d.event_type)), '[]')
                       FROM public.webhook_deliveries d WHERE d.id IN (SELECT delivery FROM r)),
      'endpoints', (SELECT coalesce(jsonb_agg(to_jsonb(e)), '[]') FROM e),
      'company', (SELECT jsonb_build_object('id', co.id, 'plan', co.plan, 'api_enabled', co.api_enabled)
                    FROM public.companies co WHERE co.id = c),
      'keys', (SELECT coalesce(jsonb_agg(to_jsonb(k) - 'secret_hash'), '[]') FROM k),
      'members', (SELECT coalesce(jsonb_agg(to_jsonb(m)), '[]') FROM public.members m
                   WHERE m.id IN (SELECT subscriber_member_id FROM e) OR m.id IN (SELECT created_by FROM k)))
    INTO v;
    result := result || jsonb_build_object(c, v);
  END LOOP;
  PERFORM set_config('app.company_id', coalesce(caller, ''), true);
  RETURN result;
END $$;

CREATE OR REPLACE FUNCTION oficina_dispatch_succeeded(p_companies text[], p_attempts text[], p_deliveries text[],
                                                      p_endpoints text[], p_started timestamptz[], p_codes integer[],
                                                      p_now timestamptz)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  caller text := current_setting('app.company_id', true);
  c text;
BEGIN
  FOR c IN SELECT DISTINCT x FROM unnest(p_companies) AS x ORDER BY x LOOP
    PERFORM set_config('app.company_id', c, true);
    INSERT INTO public.webhook_attempts
           (id, company_id, delivery_id, endpoint_id, started_at, finished_at, response_status_code, created_at)
    SELECT v.aid, d.company_id, d.id, d.endpoint_id, v.started, p_now, v.code, p_now
      FROM unnest(p_companies, p_attempts, p_deliveries, p_started, p_codes) AS v(company, aid, id, started, code)
      JOIN public.webhook_deliveries d ON d.id = v.id
     WHERE v.company = c;
    UPDATE public.webhook_deliveries AS d SET
           status = CASE WHEN d.status = 'pending' THEN 'succeeded' ELSE d.status END,
           completed_at = CASE WHEN d.status = 'pending' THEN p_now ELSE d.completed_at END,
           next_attempt_at = CASE WHEN d.status = 'pending' THEN NULL ELSE d.next_attempt_at END,
           attempt_count = d.attempt_count + 1, last_attempt_at = v.started,
           response_status_code = v.code, error = NULL, updated_at = p_now
      FROM unnest(p_companies, p_deliveries, p_started, p_codes) AS v(company, id, started, code)
     WHERE d.id = v.id AND v.company = c;
    UPDATE public.webhook_endpoints SET failing_since = NULL, access_lost_notified_at = NULL
     WHERE id IN (SELECT u.e FROM unnest(p_companies, p_endpoints) AS u(company, e) WHERE u.company = c)
       AND (failing_since IS NOT NULL OR access_lost_notified_at IS NOT NULL);
  END LOOP;
  PERFORM set_config('app.company_id', coalesce(caller, ''), true);
END $$;

-- Same-company links: every single-column foreign key between two company
-- tables becomes (company_id, x) → parent (company_id, id), keeping its
-- name and actions (ON DELETE SET NULL clears only the link column).
DO $$
DECLARE
  fk record;
  action text;
  uniq text;
BEGIN
  FOR fk IN
    SELECT c.conname, c.conrelid::regclass AS child, a.attname AS col, c.confrelid::regclass AS parent,
           c.confdeltype, c.confupdtype, c.condeferrable, c.condeferred
      FROM pg_constraint c
      JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
      JOIN pg_attribute pa ON pa.attrelid = c.confrelid AND pa.attnum = c.confkey[1]
     WHERE c.contype = 'f' AND array_length(c.conkey, 1) = 1 AND pa.attname = 'id'
       AND c.connamespace = 'public'::regnamespace
       AND EXISTS (SELECT 1 FROM pg_attribute x WHERE x.attrelid = c.conrelid AND x.attname = 'company_id' AND NOT x.attisdropped)
       AND EXISTS (SELECT 1 FROM pg_attribute x WHERE x.attrelid = c.confrelid AND x.attname = 'company_id' AND NOT x.attisdropped)
  LOOP
    uniq := replace(fk.parent::text, '"', '') || '_company_id_id_key';
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = uniq AND conrelid = fk.parent) THEN
      EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I UNIQUE (company_id, id)', fk.parent, uniq);
    END IF;
    action := CASE fk.confdeltype
      WHEN 'c' THEN 'CASCADE'
      WHEN 'n' THEN format('SET NULL (%I)', fk.col)
      WHEN 'r' THEN 'RESTRICT'
      WHEN 'd' THEN format('SET DEFAULT (%I)', fk.col)
      ELSE 'NO ACTION' END;
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', fk.child, fk.conname);
    EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I FOREIGN KEY (company_id, %I) REFERENCES %s (company_id, id) ON DELETE %s%s',
                   fk.child, fk.conname, fk.col, fk.parent, action,
                   CASE WHEN fk.condeferrable THEN ' DEFERRABLE' || CASE WHEN fk.condeferred THEN ' INITIALLY DEFERRED' ELSE '' END ELSE '' END);
  END LOOP;
END $$;
