-- Mail neither sent nor given up, for /metrics (issue 18). A number only;
-- the workers' only: owned by oficina_definer, pg_temp searched last.
CREATE OR REPLACE FUNCTION oficina_mail_backlog(OUT unsent bigint)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT count(*) FROM public.mail_outbox WHERE sent_at IS NULL AND failed_at IS NULL $$;

ALTER FUNCTION oficina_mail_backlog() OWNER TO oficina_definer;
REVOKE ALL ON FUNCTION oficina_mail_backlog() FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_mail_backlog() TO oficina_worker;
