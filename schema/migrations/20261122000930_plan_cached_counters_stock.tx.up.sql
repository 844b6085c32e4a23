-- More of the statements every creation runs as PL/pgSQL functions, whose
-- plans the session keeps (see plan_cached_writes): the company's counters,
-- the catalogue lookup of a sale's items and its stock moves. The loops
-- also take the rows one by one in the caller's order, in one round trip:
-- callers pass a stable order, so concurrent writers lock the same rows in
-- the same order and cannot deadlock.

-- The next value of each named counter of p_company, in order (numbering):
-- each row stays locked until the transaction ends, so numbers have no gaps
-- and no duplicates.
CREATE FUNCTION oficina_next_numbers(p_company text, p_names text[]) RETURNS bigint[]
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

-- Products by id, each with whether it has variations, and the variations
-- among p_variations that belong to it (products.Lookup).
CREATE FUNCTION oficina_product_lookup(p_products text[], p_variations text[])
RETURNS TABLE (id text, company_id text, name text, sku text, price_cents bigint, promotional_price_cents bigint,
               stock_quantity bigint, active boolean, created_at timestamptz, updated_at timestamptz,
               has_variations boolean, picked json)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  SELECT p.id, p.company_id, p.name, p.sku, p.price_cents, p.promotional_price_cents, p.stock_quantity, p.active,
         p.created_at, p.updated_at,
         EXISTS (SELECT 1 FROM public.product_variations x WHERE x.product_id = p.id),
         (SELECT coalesce(json_agg(x), '[]') FROM public.product_variations x
           WHERE x.product_id = p.id AND x.id = ANY (p_variations))
    FROM public.products p
   WHERE p.id = ANY (p_products);
END
$$;

-- Stock changes, applied in the order given (products.Apply): entry i
-- changes variation p_variations[i] of product p_products[i], or the
-- product itself when the variation is NULL, by p_quantities[i]. Returns
-- each entry's balance after the change; an entry whose row is gone is
-- skipped.
CREATE FUNCTION oficina_move_stock(p_products text[], p_variations text[], p_quantities bigint[])
RETURNS TABLE (ord integer, balance bigint)
LANGUAGE plpgsql AS $$
DECLARE b bigint;
BEGIN
  FOR i IN 1 .. coalesce(cardinality(p_products), 0) LOOP
    IF p_variations[i] IS NOT NULL THEN
      UPDATE public.product_variations SET stock_quantity = stock_quantity + p_quantities[i]
       WHERE id = p_variations[i] AND product_id = p_products[i]
      RETURNING stock_quantity INTO b;
    ELSE
      UPDATE public.products SET stock_quantity = stock_quantity + p_quantities[i]
       WHERE id = p_products[i]
      RETURNING stock_quantity INTO b;
    END IF;
    IF FOUND THEN
      ord := i;
      balance := b;
      RETURN NEXT;
    END IF;
  END LOOP;
END
$$;
