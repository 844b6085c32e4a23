-- Every outcome of a dispatcher cycle is recorded by one function,
-- oficina_dispatch_record (dispatch/sql; issue 25 item 3), so the two it
-- replaces go: oficina_dispatch_succeeded, which recorded successes, and
-- oficina_attempt_details, which patched the details of failures the Go
-- code had recorded one by one, finding each attempt by its start time.
-- Function files are (re)created after the migrations; removing one needs
-- this (decision 0020). Whatever their signature, and their bookkeeping
-- row with them (its table is made by the first migrate that applies
-- function files, so a new database has none yet).
DO $$
DECLARE f regprocedure;
BEGIN
  FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
            WHERE p.pronamespace = 'public'::regnamespace
              AND p.proname IN ('oficina_dispatch_succeeded', 'oficina_attempt_details') LOOP
    EXECUTE format('DROP FUNCTION %s', f);
  END LOOP;
  IF to_regclass('public.oficina_function_sources') IS NOT NULL THEN
    DELETE FROM public.oficina_function_sources WHERE name IN ('oficina_dispatch_succeeded', 'oficina_attempt_details');
  END IF;
END $$;
