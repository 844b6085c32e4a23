-- The next value of each named counter of p_company, in order (numbering):
-- each row stays locked until the transaction ends, so numbers have no gaps
-- and no duplicates. The loop takes the rows one by one in the caller's
-- order, in one round trip: callers pass a stable order, so concurrent
-- writers lock the same rows in the same order and cannot deadlock.
--
-- PL/pgSQL so the session keeps the plan; SECURITY INVOKER, so row-level
-- security applies inside as outside.
CREATE OR REPLACE FUNCTION oficina_next_numbers(p_company text, p_names text[]) RETURNS bigint[]
LANGUAGE plpgsql AS $$
DECLARE
  vals bigint[] := '{}';
  v bigint;
  n text;
BEGIN
  FOREACH n IN ARRAY p_names LOOP
    INSERT INTO public.company_counters AS c (company_id, name, value) VALUES (p_company, n, 1)
    ON CONFLICT (company_id, name) DO UPDATE SET value = c.value + 1
    RETURNING c.value INTO v;
    vals := vals || v;
  END LOOP;
  RETURN vals;
END
$$;
