-- Products by id, each with whether it has variations, and the variations
-- among p_variations that belong to it (products.Lookup).
--
-- PL/pgSQL so the session keeps the plan; SECURITY INVOKER, so row-level
-- security applies inside as outside.
CREATE OR REPLACE FUNCTION oficina_product_lookup(p_products text[], p_variations text[])
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
