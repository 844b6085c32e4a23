-- GET /sales/{id} as one statement (sales.Read): the function scopes its own
-- implicit transaction to the company — set_config(..., true) before the
-- read, in statement order, so row-level security sees the company exactly
-- as in a company transaction — then reads the row with a plan the session
-- keeps. One round trip instead of BEGIN, the read and COMMIT. It refuses to
-- run inside a transaction already scoped to another company, which it
-- would otherwise re-scope.
CREATE OR REPLACE FUNCTION oficina_sale_get(p_company text, p_id text) RETURNS SETOF public.sales
LANGUAGE plpgsql AS $$
BEGIN
  IF coalesce(current_setting('app.company_id', true), '') NOT IN ('', p_company) THEN
    RAISE EXCEPTION 'oficina_sale_get: transaction scoped to another company';
  END IF;
  PERFORM set_config('app.company_id', p_company, true);
  RETURN QUERY SELECT * FROM public.sales WHERE id = p_id;
END
$$;
