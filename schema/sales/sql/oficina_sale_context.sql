-- What creating a sale needs of its company (sales' loadContext).
--
-- PL/pgSQL so the session keeps the plan; SECURITY INVOKER, so row-level
-- security applies inside as outside.
CREATE OR REPLACE FUNCTION oficina_sale_context(p_company text)
RETURNS TABLE (plan text, timezone text, track_in_finance boolean, monthly_sale_quota integer,
               sale_quota_unlimited boolean, default_account_id text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  SELECT c.plan, c.timezone, COALESCE(s.track_in_finance, true), s.monthly_sale_quota,
         COALESCE(s.sale_quota_unlimited, false),
         (SELECT a.id FROM public.finance_accounts a WHERE a.company_id = c.id AND a.is_default)
    FROM public.companies c LEFT JOIN public.sales_settings s ON s.company_id = c.id
   WHERE c.id = p_company;
END
$$;
