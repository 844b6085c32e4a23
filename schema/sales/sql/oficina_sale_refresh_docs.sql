-- Rebuilds a sale's documents from its child tables, for writes that change
-- children outside the sale's own write path (invoice flags, receipt
-- numbers, a deleted product clearing product_id: products calls it too).
-- Runs as the caller, so row-level security applies.
CREATE OR REPLACE FUNCTION oficina_sale_refresh_docs(p_sale text) RETURNS void
  LANGUAGE sql AS $$
  UPDATE sales s SET
    items_doc = (SELECT coalesce(jsonb_agg(to_jsonb(i) ORDER BY i.position), '[]') FROM sale_items i
      WHERE i.sale_id = s.id AND i.version = s.version),
    installments_doc = (SELECT coalesce(jsonb_agg(to_jsonb(n) ORDER BY n.due_date, n.id), '[]') FROM sale_installments n
      WHERE n.sale_id = s.id),
    payments_doc = (SELECT coalesce(jsonb_agg(to_jsonb(y) || jsonb_build_object('allocations',
        (SELECT coalesce(jsonb_agg(to_jsonb(a)), '[]') FROM sale_payment_allocations a WHERE a.payment_id = y.id))
      ORDER BY y.created_at, y.id), '[]') FROM sale_payments y WHERE y.sale_id = s.id)
  WHERE s.id = p_sale $$;

GRANT EXECUTE ON FUNCTION oficina_sale_refresh_docs(text) TO oficina_app;
