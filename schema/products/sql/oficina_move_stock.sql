-- Stock changes, applied in the order given (products.Apply): entry i
-- changes variation p_variations[i] of product p_products[i], or the
-- product itself when the variation is NULL, by p_quantities[i]. Returns
-- each entry's balance after the change; an entry whose row is gone is
-- skipped. Rows are taken one by one in the caller's order, in one round
-- trip: callers pass a stable order, so concurrent writers lock the same
-- rows in the same order and cannot deadlock.
--
-- PL/pgSQL so the session keeps the plans; SECURITY INVOKER, so row-level
-- security applies inside as outside.
CREATE OR REPLACE FUNCTION oficina_move_stock(p_products text[], p_variations text[], p_quantities bigint[])
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
