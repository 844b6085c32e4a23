-- No client data in the PostgreSQL server log (issue 15 item 4,
-- docs/operating.md "Database server log"). The app roles' statements carry
-- client data (bun inlines values into the SQL text), so for the roles the
-- service connects as:
--   * a failing statement is not logged with its error (the error is, tersely,
--     without DETAIL/CONTEXT, which quote the row's values);
--   * no statement is logged by kind or by duration, and no bind parameter.
-- The service logs the cause of every 5xx itself, with its request id.
-- These parameters are superuser-only: on a managed PostgreSQL whose
-- migrator is not a superuser, set them in the server's parameter group for
-- these roles (the migration says so and goes on).
DO $$
DECLARE r text;
BEGIN
  IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    RAISE NOTICE 'not a superuser: set log_min_error_statement=panic, log_error_verbosity=terse, log_statement=none, log_min_duration_statement=-1, log_parameter_max_length=0, log_parameter_max_length_on_error=0 for oficina_app and oficina_worker in the server configuration';
    RETURN;
  END IF;
  FOREACH r IN ARRAY ARRAY['oficina_app', 'oficina_worker'] LOOP
    EXECUTE format('ALTER ROLE %I SET log_min_error_statement = panic', r);
    EXECUTE format('ALTER ROLE %I SET log_error_verbosity = terse', r);
    EXECUTE format('ALTER ROLE %I SET log_statement = none', r);
    EXECUTE format('ALTER ROLE %I SET log_min_duration_statement = -1', r);
    EXECUTE format('ALTER ROLE %I SET log_parameter_max_length = 0', r);
    EXECUTE format('ALTER ROLE %I SET log_parameter_max_length_on_error = 0', r);
  END LOOP;
END $$;
