-- The daily overdue routine runs for every company: this definer function
-- is its one door through row-level security and answers only which
-- companies have installments past due in their own time zone at p_now.
-- The workers' only: owned by oficina_definer, pg_temp searched last.
CREATE OR REPLACE FUNCTION oficina_sales_overdue_companies(p_now timestamptz) RETURNS SETOF text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$ SELECT DISTINCT i.company_id FROM sale_installments i JOIN companies c ON c.id = i.company_id
        WHERE i.status = 'open' AND i.due_date < (p_now AT TIME ZONE c.timezone)::date $$;

ALTER FUNCTION oficina_sales_overdue_companies(timestamptz) OWNER TO oficina_definer;
REVOKE ALL ON FUNCTION oficina_sales_overdue_companies(timestamptz) FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_sales_overdue_companies(timestamptz) TO oficina_worker;
